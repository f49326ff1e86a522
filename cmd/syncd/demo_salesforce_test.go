package main

import (
	"testing"

	"github.com/syncd-io/syncd/connector/salesforce/salesforceemu"
)

// TestValidateChecksSalesforceFields checks the mapping against the
// object's describe: a misspelt field is a problem naming it, and so is a
// field flowing back into one Salesforce keeps read-only; a field in
// another case is the same API name.
func TestValidateChecksSalesforceFields(t *testing.T) {
	org := salesforceemu.NewServer(salesforceemu.Options{})
	defer org.Close()
	yaml := `workspace:
  baseURL: http://127.0.0.1:1
  apiKey: k
connectors:
  - name: sf
    type: salesforce
    direction: both
    settings:
      loginURL: ` + org.LoginURL + `
      clientId: ` + org.ClientID() + `
      clientSecret: ` + org.ClientSecret() + `
    mapping:
      fields:
        firstName: firstname
        lastName: LastName
        emails.work: Emial
        role: Name
        company: { from: MailingCity, direction: to-workspace }
`
	wantInvalid(t, yaml, 2,
		`connectors[sf].mapping.fields.emails.work: unknown source field "Emial"; the source has: `,
		`connectors[sf].mapping.fields.role: source field "Name" cannot be written, and this field flows back; set direction: to-workspace on it`,
	)
	if st := org.Stats(); st.Requests[salesforceemu.RouteDescribe] != 1 || org.TokenCalls() != 1 {
		t.Errorf("validate made %d describe and %d token calls, want 1 and 1", st.Requests[salesforceemu.RouteDescribe], org.TokenCalls())
	}
}
