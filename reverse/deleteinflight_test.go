package reverse

import (
	"context"
	"net/http"
	"testing"

	"github.com/syncd-io/syncd/workspace"
)

// beforeRequest is a transport that runs during once, when the first
// request of method has left the client (its checks done) and before the
// workspace applies it: a request in flight.
type beforeRequest struct {
	method string
	during func()
}

func (b *beforeRequest) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method == b.method && b.during != nil {
		b.during()
		b.during = nil
	}
	return http.DefaultTransport.RoundTrip(req)
}

// inFlightClient is a workspace client whose first request of method
// runs during in flight (beforeRequest).
func (e *env) inFlightClient(method string, during func()) *workspace.Client {
	e.t.Helper()
	c, err := workspace.NewClient(workspace.ClientOptions{BaseURL: e.emu.URL, APIKey: "k", RateLimit: 1000, Burst: 100, Log: quietLog(),
		HTTPClient: &http.Client{Transport: &beforeRequest{method: method, during: during}}})
	if err != nil {
		e.t.Fatal(err)
	}
	return c
}

// liveRecords returns the records not deleted.
func (m *memConn) liveRecords() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []string
	for id, r := range m.recs {
		if !r.Deleted {
			out = append(out, id)
		}
	}
	return out
}

// TestAppEditWhileRecordDeleteIsInFlight: the pass deletes the contact of
// a deleted record, and the app edits the contact while the DELETE is in
// flight (sent after the last look at the inbox, applied after the
// edit). The edit, well after the record's deletion, was deleted with
// no journal entry (issue 35: the soak's latency faults). The workspace
// event of the edit, newer than the contact syncd deleted, is weighed
// when it arrives: with edit-wins the record is made again from it (and
// the forward pass makes its contact); otherwise the delete stands.
// Either way it is journaled.
func TestAppEditWhileRecordDeleteIsInFlight(t *testing.T) {
	for _, tc := range appEditAfterDeleteCases {
		t.Run(tc.name, func(t *testing.T) {
			e, id := newRecordDeletedEnv(t, tc.rule)
			e.fwd = e.inFlightClient(http.MethodDelete, func() {
				e.appPatch(id, workspace.ContactPatch{DefaultFields: &workspace.DefaultFieldsPatch{FirstName: workspace.Some("App")}})
			})
			e.forward()
			e.fwd = nil
			if _, err := e.ws.GetContact(context.Background(), id); !workspace.IsNotFound(err) {
				t.Fatalf("contact %s after the pass: %v, want it deleted (the edit landed before the DELETE)", id, err)
			}
			e.waitDelivered()
			e.drain()
			e.forward()
			e.waitDelivered()
			e.drain()
			live := e.mem.liveRecords()
			switch {
			case tc.stays && len(live) != 1:
				t.Fatalf("live records %v, want one made again from the app's edit", live)
			case !tc.stays && len(live) != 0:
				t.Fatalf("live records %v, want none: the delete stands", live)
			}
			if tc.stays {
				rec := e.mem.get(live[0])
				if rec.Fields["first_name"] != "App" || rec.Fields["email"] != "p1@example.com" {
					t.Errorf("record %+v: want the app's edit", rec)
				}
				c, ok := e.contactOf(live[0])
				if !ok || *c.DefaultFields.FirstName != "App" {
					t.Errorf("contact of record %s: %+v (found %v), want one made from it with the app's edit", live[0], c, ok)
				}
			}
			e.checkAfterDelete(tc.winner)
			if _, ok, err := e.store.Reverse.DeletionOf("mem", id); err != nil || ok {
				t.Errorf("deletion of contact %s still recorded (%v): want it dropped once settled", id, err)
			}
		})
	}
}
