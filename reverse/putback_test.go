package reverse

import (
	"net/http"
	"testing"
	"time"

	"github.com/syncd-io/syncd/policy"
	"github.com/syncd-io/syncd/workspace"
)

// beforeRequests runs, before each request of method, the next of its
// funcs (none once they run out).
type beforeRequests struct {
	method string
	during []func()
}

func (b *beforeRequests) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method == b.method && len(b.during) > 0 {
		f := b.during[0]
		b.during = b.during[1:]
		f()
	}
	return http.DefaultTransport.RoundTrip(req)
}

// TestAppEditDuringPutBack: the pass's patch of the table's first name
// lands on an app edit of it, whose event reaches the inbox while the
// patch is in flight; the app's edit wins (newest-wins) and the pass
// puts it back. While that put-back is in flight the app edits the first
// name again, and that event arrives only after the put-back's answer.
// The put-back overwrote the newer edit with the app's older one: the
// write-back took the newer edit's version for stale, older than the
// link, and both sides ended with the older app value (issue 35: the
// binlog soak, seed 6, an app edit 0.7 s after the app's previous one
// lost with no journal entry). The newer edit is weighed as the flight of
// the put-back, and it wins; the patch's echo, late too, is syncd's own
// value, not an app edit.
func TestAppEditDuringPutBack(t *testing.T) {
	for _, tc := range []struct {
		name   string
		appTwo bool // the app edits the first name again during the put-back
		want   string
	}{
		{name: "a newer app edit during the put-back", appTwo: true, want: "App 2"},
		{name: "only the patch's echo comes late", want: "App"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, func(tg *Target) { tg.Conflict = policy.NewestWins })
			e.seed(1)
			id := e.link("1").ContactID
			e.mem.put("1", map[string]any{"first_name": "Table"})
			e.mem.setUpdatedAt("1", time.Now().Add(-time.Second))
			var echo, app2 workspace.Contact
			c, err := workspace.NewClient(workspace.ClientOptions{BaseURL: e.emu.URL, APIKey: "k", RateLimit: 1000, Burst: 100, Log: quietLog(),
				HTTPClient: &http.Client{Transport: &beforeRequests{method: http.MethodPatch, during: []func(){
					func() { // the pass's patch: the app's edit, its event in time for the pass's look after the answer
						app := e.appPatch(id, workspace.ContactPatch{DefaultFields: &workspace.DefaultFieldsPatch{FirstName: workspace.Some("App")}})
						e.event("app", workspace.EventContactUpdated, app)
					},
					func() { // the put-back: the patch's echo, and the app's newer edit, their events late
						c, err := e.ws.GetContact(t.Context(), id)
						if err != nil {
							t.Error(err)
						}
						echo = c
						if tc.appTwo {
							app2 = e.appPatch(id, workspace.ContactPatch{DefaultFields: &workspace.DefaultFieldsPatch{FirstName: workspace.Some("App 2")}})
						}
					},
				}}}})
			if err != nil {
				t.Fatal(err)
			}
			e.fwd = c
			e.forward()
			e.fwd = nil
			now, err := e.ws.GetContact(t.Context(), id)
			if err != nil {
				t.Fatal(err)
			}
			if got := *now.DefaultFields.FirstName; got != "App" {
				t.Fatalf("contact's first name after the put-back = %q, want the put-back's (App)", got)
			}
			e.event("echo", workspace.EventContactUpdated, echo)
			if tc.appTwo {
				e.event("app 2", workspace.EventContactUpdated, app2)
			}
			e.event("put-back", workspace.EventContactUpdated, now)
			e.drain()
			e.mem.setUpdatedAt("1", time.Now()) // the write-back's UPDATE, as a trigger does
			e.forward()
			e.settle()
			if got := *e.contact("1").DefaultFields.FirstName; got != tc.want {
				t.Errorf("contact's firstName = %q, want %q", got, tc.want)
			}
			if got := e.mem.get("1").Fields["first_name"]; got != tc.want {
				t.Errorf("record's first_name = %v, want %q", got, tc.want)
			}
			cs, err := e.store.Conflicts.List("mem", 0)
			if err != nil {
				t.Fatal(err)
			}
			for _, cf := range cs {
				if cf.Workspace["firstName"] == cf.Source["firstName"] {
					t.Errorf("conflict journaled between equal values: %+v", cf)
				}
			}
		})
	}
}
