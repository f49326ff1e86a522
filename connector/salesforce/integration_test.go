//go:build integration

package salesforce

import (
	"os"
	"testing"

	"github.com/syncd-io/syncd/connector/connectortest"
)

// TestRealOrg reads from a real Salesforce org, read-only: the Contact
// describe and one query page. Run it with
//
//	SF_LOGIN_URL=https://acme.my.salesforce.com SF_CLIENT_ID=... SF_CLIENT_SECRET=... \
//	  go test -tags integration -run TestRealOrg ./connector/salesforce/
//
// with a connected app that has the client credentials flow enabled and
// a run-as user that can read Contacts.
func TestRealOrg(t *testing.T) {
	set := NewSettings()
	set.LoginURL = os.Getenv("SF_LOGIN_URL")
	set.ClientID, set.ClientSecret = Secret(os.Getenv("SF_CLIENT_ID")), Secret(os.Getenv("SF_CLIENT_SECRET"))
	if set.LoginURL == "" || set.ClientID == "" || set.ClientSecret == "" {
		t.Fatal("SF_LOGIN_URL, SF_CLIENT_ID and SF_CLIENT_SECRET must be set: the org's My Domain URL and a connected app's consumer key and secret")
	}
	set.PageSize = 200
	ctx, src := connectortest.OpenLive(t, Open, set, "FirstName", "LastName", "Email")
	connectortest.WantFields(ctx, t, src, "the Contact describe's fields", "Id", "LastName", "SystemModstamp", "IsDeleted", "MasterRecordId")
	page := connectortest.FirstBatch(ctx, t, src, "query")
	if q := src.Quotas(); len(q) != 1 || q[0].Limit == 0 {
		t.Errorf("no Sforce-Limit-Info read: %+v", q)
	}
	if page == nil {
		t.Log("the org has no Contacts: nothing more to check")
		return
	}
	for _, r := range page.Records {
		if r.ID == "" || r.UpdatedAt.IsZero() {
			t.Errorf("record %+v", r)
		}
	}
	if _, err := parseCheckpoint(page.Checkpoint); err != nil {
		t.Error(err)
	}
}
