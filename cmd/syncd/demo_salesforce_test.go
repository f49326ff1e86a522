package main

import (
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/syncd-io/syncd/connector/salesforce/salesforcetest"
)

// TestSalesforceDemo checks the counts the Salesforce demo claims.
func TestSalesforceDemo(t *testing.T) {
	out, _, err := runMain(t, "demo", "--dir", t.TempDir(), "--crm", "salesforce", "--rows", "10")
	if err != nil {
		t.Fatalf("demo: %v\n%s", err, out)
	}
	for _, w := range []string{
		"created=10 updated=0",
		"1 token call",
		"reached Salesforce: true, in 1 sObject Collections update call(s)",
		"recognised as its own, 0 PATCH",
		"1 PATCH to the workspace; its webhook came back as an echo and was dropped: 0 Salesforce writes",
		"relinked=1",
		"lastName \"Turing-Merged\"",
		"syncd stops a pass at 50% of them",
	} {
		if !strings.Contains(out, w) {
			t.Errorf("demo output lacks %q:\n%s", w, out)
		}
	}
}

// TestValidateChecksSalesforceFields checks the mapping against the
// object's describe: a misspelt field is a problem naming it, and so is a
// field flowing back into one Salesforce keeps read-only; a field in
// another case is the same API name.
func TestValidateChecksSalesforceFields(t *testing.T) {
	org := salesforcetest.NewServer(salesforcetest.Options{})
	defer org.Close()
	dir := t.TempDir()
	cfg := dir + "/syncd.yaml"
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
	if err := os.WriteFile(cfg, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	_, serr, err := runMain(t, "validate", "--config", cfg)
	var ie *InvalidConfigError
	if !errors.As(err, &ie) || ie.Problems != 2 {
		t.Fatalf("err = %v, want 2 problems\n%s", err, serr)
	}
	for _, want := range []string{
		`connectors[sf].mapping.fields.emails.work: unknown source field "Emial"; the source has: `,
		`connectors[sf].mapping.fields.role: source field "Name" cannot be written, and this field flows back; set direction: to-workspace on it`,
	} {
		if !strings.Contains(serr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, serr)
		}
	}
	if st := org.Stats(); st.Requests[salesforcetest.RouteDescribe] != 1 || org.TokenCalls() != 1 {
		t.Errorf("validate made %d describe and %d token calls, want 1 and 1", st.Requests[salesforcetest.RouteDescribe], org.TokenCalls())
	}
}
