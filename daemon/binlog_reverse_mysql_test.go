package daemon_test

import (
	"context"
	"testing"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/syncd-io/syncd/internal/configfile"
	"github.com/syncd-io/syncd/policy"
	"github.com/syncd-io/syncd/test/emutest"
	"github.com/syncd-io/syncd/workspace"
	"github.com/syncd-io/syncd/workspace/emulator"
)

// TestMySQLBinlogWriteBackIsAnEcho: syncd's own write-back to a MariaDB
// table (an app edit and an app-made contact, delivered to the daemon's
// webhook receiver by the emulated service) comes back through the binlog
// on the next forward pass, which recognises it as its echo: it reads
// the rows and writes nothing to the workspace (no PATCH of the edited
// contact, no second contact for the created row).
func TestMySQLBinlogWriteBackIsAnEcho(t *testing.T) {
	e := newBinlogEnv(t, 5, func(f *configfile.File) {
		f.Webhooks = configfile.Webhooks{Listen: "127.0.0.1:0", Path: "/hooks/workspace"}
		c := &f.Connectors[0]
		c.Direction, c.OnWorkspaceCreate = policy.Both, policy.CreateRecord
	})
	ctx := context.Background()
	if _, err := e.d.RunOnce(ctx); err != nil || len(e.names()) != 5 {
		t.Fatalf("first pass: %v, %d contacts, want 5", err, len(e.names()))
	}
	api, err := workspace.NewClient(workspace.ClientOptions{BaseURL: e.emu.URL, APIKey: emulator.DefaultAPIKey, RateLimit: 1000, Burst: 100,
		Log: logrus.NewEntry(quiet())})
	if err != nil {
		t.Fatal(err)
	}
	rev, _, _ := startSubscribed(t, e.d, api, e.cfg.Webhooks.Path)
	t.Cleanup(rev.Stop)
	l, ok, err := e.d.Store().Links.Get("shop", "2")
	if err != nil || !ok {
		t.Fatalf("link of row 2: %v %v", ok, err)
	}
	app := emutest.NewApp(t, e.emu.URL)
	app.Patch(l.ContactID, workspace.ContactPatch{DefaultFields: &workspace.DefaultFieldsPatch{LastName: workspace.Some("Edited")}})
	app.Create(workspace.ContactCreate{DefaultFields: workspace.DefaultFieldsInput{FirstName: "Made", LastName: "InApp"}})
	waitReverseQuiet(t, e.emu.Emulator, e.d, rev, 20*time.Second)
	if st := rev.Applier.Stats(); st.Written != 1 || st.Created != 1 {
		t.Fatalf("write-back %+v, want 1 written and 1 created", st)
	}
	var last string
	if err := e.db.QueryRow(`SELECT last_name FROM contacts WHERE id = 2`).Scan(&last); err != nil || last != "Edited" {
		t.Fatalf("row 2 last_name %q (%v), want Edited", last, err)
	}
	var made int
	if err := e.db.QueryRow(`SELECT COUNT(*) FROM contacts WHERE first_name = 'Made' AND last_name = 'InApp'`).Scan(&made); err != nil || made != 1 {
		t.Fatalf("%d rows made for the app's contact (%v), want 1", made, err)
	}

	before := e.emu.Stats()
	sums, err := e.d.RunOnce(ctx)
	if err != nil {
		t.Fatalf("forward pass over the write-back: %v", err)
	}
	after := e.emu.Stats()
	for _, route := range []string{"POST /v1/contacts", "PATCH /v1/contacts/{id}", "DELETE /v1/contacts/{id}"} {
		if n := after.Requests[route] - before.Requests[route]; n != 0 {
			t.Errorf("the forward pass over syncd's own write-back sent %d %s: not recognised as its echo", n, route)
		}
	}
	if s := sums[0]; s.Unchanged < 2 || s.Created+s.Updated != 0 {
		t.Errorf("forward pass %+v, want the two written rows read back from the binlog as unchanged", s)
	}
	checkNames(t, e.names(), []string{"First2 Edited", "Made InApp"}, []string{"First2 Last2"}, 6)
}
