//go:build integration

package hubspot

import (
	"os"
	"testing"

	"github.com/syncd-io/syncd/connector/connectortest"
	"github.com/syncd-io/syncd/internal/testkit/testenv"
)

// TestRealAccount reads from a real HubSpot account, read-only: the
// contact property list and one search page. Run it with
//
//	HUBSPOT_TOKEN=pat-... go test -tags integration -run TestRealAccount ./connector/hubspot/
//
// with a private app token that has the crm.objects.contacts.read scope
// (HUBSPOT_BASE_URL picks a regional host).
func TestRealAccount(t *testing.T) {
	token := testenv.Require(t, "HUBSPOT_TOKEN", "set it to a private app token with the crm.objects.contacts.read scope")
	set := NewSettings()
	set.Token = Secret(token)
	if u := os.Getenv("HUBSPOT_BASE_URL"); u != "" {
		set.BaseURL = u
	}
	set.PageSize = 10
	ctx, src := connectortest.OpenLive(t, Open, set, "email", "firstname", "lastname")
	connectortest.WantFields(ctx, t, src, "contact properties", "email", "hs_object_id", "lastmodifieddate")

	page := connectortest.FirstBatch(ctx, t, src, "search")
	if page == nil {
		t.Log("the account has no contacts: nothing to check")
		return
	}
	if len(page.Records) == 0 || len(page.Records) > 10 || page.Checkpoint == "" {
		t.Fatalf("first page: %d records, checkpoint %q", len(page.Records), page.Checkpoint)
	}
	for _, r := range page.Records {
		if r.ID == "" || r.UpdatedAt.IsZero() || r.Fields["hs_object_id"] != r.ID || r.Deleted {
			t.Errorf("record %+v", r)
		}
		if _, ok := r.Fields["email"]; !ok {
			t.Errorf("record %s lacks the email field", r.ID)
		}
	}
	if _, err := parseCheckpoint(page.Checkpoint); err != nil {
		t.Error(err)
	}
}
