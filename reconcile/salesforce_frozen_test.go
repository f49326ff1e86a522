package reconcile

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/syncd-io/syncd/connector"
	"github.com/syncd-io/syncd/connector/salesforce/salesforceemu"
)

// TestSalesforceRefusedDeletionScanDoesNotFreezeTheWindow is issue 22's
// stalled forward direction: a bulk edit of 599 Contacts (a window of
// three pages of 200), a pass that stops after the first page (as a
// crash would), and a getDeleted at the window's end that Salesforce
// refuses (INVALID_REPLICATION_DATE: the delete log purged past the scan's
// start, or refused for a reason syncd cannot foresee). The resumed pass
// still applies every page and closes the window; the later passes go
// on, never asking for the refused range again, and an edit made after
// the refusal arrives too.
func TestSalesforceRefusedDeletionScanDoesNotFreezeTheWindow(t *testing.T) {
	cases := []struct {
		name   string
		refuse func(org *salesforceemu.Server)
	}{
		{"the delete log was purged past the scan's start", func(org *salesforceemu.Server) {
			id := org.Add("Contact", map[string]any{"LastName": "Gone"})
			_ = org.Delete(id)
			org.EmptyRecycleBin(org.Now().Add(time.Millisecond), true)
		}},
		{"getDeleted refused once", func(org *salesforceemu.Server) {
			org.Fail(salesforceemu.RouteDeleted, 1, http.StatusBadRequest, "INVALID_REPLICATION_DATE",
				"startDate must chronologically precede endDate by more than one minute")
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			const n = 599
			e := newSFEnv(t)
			e.pageSize = 200
			e.org.Advance(time.Second)
			ids := make([]string, n)
			for i := range ids {
				ids[i] = e.org.Add("Contact", sfContact(i))
			}
			e.org.Advance(time.Second)
			if sum, err := e.run(nil); err != nil || sum.Created != n {
				t.Fatalf("first pass: %v, %v; want %d created", sum, err, n)
			}
			e.org.Advance(3 * time.Minute)
			for i, id := range ids { // the bulk edit, over two seconds
				if i == n/2 {
					e.org.Advance(time.Second)
				}
				if err := e.org.Update(id, map[string]any{"FirstName": fmt.Sprint("Bulk", i)}); err != nil {
					t.Fatal(err)
				}
			}
			e.org.Advance(2 * time.Minute)
			crash := &crashAfter{n: 1}
			if _, err := e.run(func(s connector.Source) connector.Source { crash.Source = s; return crash }); err == nil {
				t.Fatal("the pass meant to stop after its first page reported no error")
			}
			c.refuse(e.org)
			if _, err := e.run(nil); err != nil {
				t.Fatalf("the pass whose deletion scan is refused: %v", err)
			}
			edited := 0
			for _, cs := range e.contactsByExt() {
				if len(cs) == 1 && len(deref(cs[0].DefaultFields.FirstName)) > 4 && deref(cs[0].DefaultFields.FirstName)[:4] == "Bulk" {
					edited++
				}
			}
			if edited != n {
				t.Errorf("%d of %d bulk-edited records arrived in the workspace", edited, n)
			}
			for pass := range 3 {
				e.org.Advance(2 * time.Minute)
				late := ids[pass]
				if err := e.org.Update(late, map[string]any{"LastName": fmt.Sprint("Later", pass)}); err != nil {
					t.Fatal(err)
				}
				e.org.Advance(time.Second)
				sum, err := e.run(nil)
				if err != nil || sum.Updated != 1 {
					t.Fatalf("pass %d after the refusal: %v, %v; want the one later edit applied", pass+1, sum, err)
				}
				if got := deref(e.contactsByExt()[late][0].DefaultFields.LastName); got != fmt.Sprint("Later", pass) {
					t.Errorf("pass %d: the later edit's lastName is %q", pass+1, got)
				}
			}
			st := e.org.Stats()
			if refused := st.Responses[salesforceemu.RouteDeleted][http.StatusBadRequest]; refused != 1 {
				t.Errorf("getDeleted refused %d times, want once (the refused range is never asked again)", refused)
			}
			if ok := st.Responses[salesforceemu.RouteDeleted][http.StatusOK]; ok < 2 {
				t.Errorf("%d getDeleted calls answered after the refusal, want the later windows to scan", ok)
			}
		})
	}
}
