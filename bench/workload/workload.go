// Package workload holds the mapping and records `syncd bench` measures
// (shipped with it), which the mapping benchmarks measure too, so that
// both measure the same work.
package workload

import (
	"fmt"
	"time"

	"github.com/syncd-io/syncd/connector"
)

// CRMSpec is a CRM connector's mapping of realistic shape: every kind of
// target, the e-mail and phone normalisers, a split and a sourceUrl.
const CRMSpec = `
externalId: id
sourceUrl: "https://crm.example.com/contacts/{{ .id }}"
fields:
  firstName: first_name
  lastName: { from: last_name, transform: trim }
  company: company
  emails.work: { from: email, transform: [email] }
  phoneNumbers.mobile: { from: mobile, transform: [e164], region: US }
  custom.tags: { from: tags, transform: ["split:;"] }
  custom.lifecycle: { from: stage, direction: to-workspace }
`

// Record is a CRM record i of realistic shape for CRMSpec, its values in
// the untidy form systems hand them out (spaces, national phone numbers,
// mixed-case e-mails), so that every normaliser does its work.
func Record(i int) connector.Record {
	return connector.Record{
		ID: fmt.Sprint(i),
		Fields: map[string]any{
			"id": fmt.Sprint(i), "first_name": "Ada", "last_name": "  Lovelace ", "company": "Analytical Engines Ltd",
			"email":  fmt.Sprintf(" Ada.Lovelace%d@Example.COM", i),
			"mobile": fmt.Sprintf("(415) 555-%04d", i%10000),
			"tags":   "vip; engineering ;customer", "stage": "customer",
		},
		UpdatedAt: time.Unix(1770000000, 0),
	}
}
