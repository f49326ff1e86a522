package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/syncd-io/syncd/connector/hubspot/hubspotemu"
	"github.com/syncd-io/syncd/connector/pipedrive/pipedriveemu"
	"github.com/syncd-io/syncd/connector/salesforce/salesforceemu"
	"github.com/syncd-io/syncd/workspace"
)

// TestInitCRMs: for each CRM, through its test server, init reads the
// fields (HubSpot's properties, Pipedrive's person fields, Salesforce's
// describe) and a sample, writes a file naming the token as a reference,
// and that file validates and syncs the CRM's contacts with their fields.
func TestInitCRMs(t *testing.T) {
	tests := []struct {
		name  string
		start func(t *testing.T) (args []string, secret string)
		want  []string // lines of the file
		// contact is the workspace contact the seeded record becomes:
		// first|last|company|role|emails|phones|custom tier.
		contact string
	}{
		{
			name: "hubspot",
			start: func(t *testing.T) ([]string, string) {
				hs := hubspotemu.NewServer(hubspotemu.Options{Seed: 1})
				t.Cleanup(hs.Close)
				hs.Add(map[string]string{"firstname": "Ada", "lastname": "Lovelace", "email": "ada@example.com", "phone": "+1 415 555 0100", "company": "Engines", "jobtitle": "Programmer"})
				return []string{"--type", "hubspot", "--set", "token=" + hs.Token(), "--set", "baseURL=" + hs.URL}, hs.Token()
			},
			want:    []string{"token: ${HUBSPOT_TOKEN}", "firstName: firstname", "lastName: lastname", "company: company", "role: jobtitle", "emails.work: email", "phoneNumbers.work: {from: phone, transform: [e164], region: US}"},
			contact: "Ada|Lovelace|Engines|Programmer|work=ada@example.com|work=+14155550100|",
		},
		{
			name: "pipedrive",
			start: func(t *testing.T) ([]string, string) {
				pd := pipedriveemu.NewServer(pipedriveemu.Options{CustomFields: []pipedriveemu.CustomField{{Name: "Loyalty tier", Type: "varchar"}}})
				t.Cleanup(pd.Close)
				pd.SetClock(time.Now().Add(-time.Minute)) // a person edited a minute ago, past the connector's lookback
				tier := pd.CustomFields()[0].Key
				org := pd.AddOrg("Engines")
				pd.Add(pipedriveemu.Person{Name: "Ada Lovelace", OrgID: org, Emails: []pipedriveemu.Item{{Value: "ada@example.com", Primary: true, Label: "work"}},
					Phones: []pipedriveemu.Item{{Value: "020 7946 0018", Primary: true, Label: "mobile"}}, Custom: map[string]any{tier: "gold"}})
				return []string{"--type", "pipedrive", "--set", "apiToken=" + pd.Token(), "--set", "baseURL=" + pd.URL}, pd.Token()
			},
			want:    []string{"apiToken: ${PIPEDRIVE_API_TOKEN}", "firstName: first_name", "lastName: last_name", "company: org_name", "emails.work: emails.work", "emails.home: emails.home", "emails.primary: the primary e-mail address", "phoneNumbers.mobile: {from: phones.mobile, transform: [e164], region: GB}", `matches the workspace's custom field "Loyalty tier"`},
			contact: "Ada|Lovelace|Engines||work=ada@example.com|mobile=+442079460018|gold",
		},
		{
			name: "salesforce",
			start: func(t *testing.T) ([]string, string) {
				org := salesforceemu.NewServer(salesforceemu.Options{RealClock: true})
				t.Cleanup(org.Close)
				org.Add("Contact", map[string]any{"FirstName": "Ada", "LastName": "Lovelace", "Email": "ada@example.com", "MobilePhone": "+1 415 555 0100", "Title": "Programmer"})
				time.Sleep(2100 * time.Millisecond) // SystemModstamp has whole seconds and settle is 1s: let the read window pass it
				return []string{"--type", "salesforce", "--set", "settle=1s", "--set", "loginURL=" + org.LoginURL, "--set", "clientId=" + org.ClientID(), "--set", "clientSecret=" + org.ClientSecret()}, org.ClientSecret()
			},
			want:    []string{"clientId: ${SALESFORCE_CLIENT_ID}", "clientSecret: ${SALESFORCE_CLIENT_SECRET}", "firstName: FirstName", "lastName: LastName", "role: Title", "emails.work: Email", "phoneNumbers.mobile: {from: MobilePhone, transform: [e164], region: US}"},
			contact: "Ada|Lovelace||Programmer|work=ada@example.com|mobile=+14155550100|",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newInitEnv(t, workspace.CustomFieldDefinition{Name: "Loyalty tier", Key: "tier", Type: workspace.FieldString})
			args, secret := tt.start(t)
			cfg := filepath.Join(e.dir, "syncd.yaml")
			out := e.must(nil, append(append([]string{"init"}, args...), "--base-url", e.emu.URL, "--out", cfg)...)
			data, err := os.ReadFile(cfg)
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(string(data), secret) {
				t.Fatalf("the file holds a secret:\n%s", data)
			}
			for _, want := range tt.want {
				if !strings.Contains(string(data), want) {
					t.Errorf("the file lacks %q:\n%s", want, data)
				}
			}
			e.exportsFrom(out)
			e.must(nil, "validate", "--config", cfg)
			e.must(nil, "run", "--once", "--config", cfg)
			cs := e.emu.Contacts()
			if len(cs) != 1 {
				t.Fatalf("%d contacts, want 1", len(cs))
			}
			d := cs[0].DefaultFields
			got := strings.Join([]string{str(d.FirstName), str(d.LastName), str(d.Company), str(d.Role), items(d.Emails), items(d.PhoneNumbers), customValue(cs[0], "tier")}, "|")
			if got != tt.contact {
				t.Fatalf("contact %s, want %s\nfile:\n%s", got, tt.contact, data)
			}
		})
	}
}
