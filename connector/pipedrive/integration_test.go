//go:build integration

package pipedrive

import (
	"os"
	"testing"

	"github.com/syncd-io/syncd/connector"
	"github.com/syncd-io/syncd/connector/connectortest"
	"github.com/syncd-io/syncd/internal/testkit/testenv"
)

// TestRealAccount reads from a real Pipedrive company, read-only: the
// person fields, one page of persons and one page of the recents feed.
// Run it with
//
//	PIPEDRIVE_API_TOKEN=... go test -tags integration -run TestRealAccount ./connector/pipedrive/
//
// (PIPEDRIVE_BASE_URL picks the company domain URL).
func TestRealAccount(t *testing.T) {
	token := testenv.Require(t, "PIPEDRIVE_API_TOKEN", "set it to a personal API token of a user with access to the persons")
	set := NewSettings()
	set.APIToken = connector.Secret(token)
	if u := os.Getenv("PIPEDRIVE_BASE_URL"); u != "" {
		set.BaseURL = u
	}
	set.PageSize = 10
	ctx, src := connectortest.OpenLive(t, Open, set, fieldName, "emails.primary", fieldOrgName)
	connectortest.WantFields(ctx, t, src, "person fields", fieldName, "emails.work", fieldUpdateTime)
	labels, err := src.FieldNames(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d custom person fields", len(labels))

	page := connectortest.FirstBatch(ctx, t, src, "changes")
	if page == nil {
		t.Log("the company has no persons: nothing to check")
		return
	}
	for _, r := range page.Records {
		if r.ID == "" || r.UpdatedAt.IsZero() || r.Deleted {
			t.Errorf("record %+v", r)
		}
	}
	if _, err := parseCheckpoint(page.Checkpoint); err != nil {
		t.Error(err)
	}
	if q := src.Quotas(); len(q) == 0 || q[0].Limit == 0 {
		t.Errorf("quotas %+v: the answers carried no x-ratelimit-limit", q)
	}
}
