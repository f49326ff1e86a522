package daemon_test

import (
	"context"
	"errors"
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/sirupsen/logrus"

	"github.com/syncd-io/syncd/admin"
	"github.com/syncd-io/syncd/daemon"
	"github.com/syncd-io/syncd/reconcile"
)

// TestPGRefusedMassDeleteStaysVisible (issue 30): after a TRUNCATE of a
// streamed table, the mass-delete guard refuses the resync that follows;
// the refusal, with the command to act on it, stays in /status and on
// the health page over later passes and a restart (before, it was one
// log line and the next pass hid it), until the operator acts: a resync
// with --allow-mass-delete through the running daemon's admin API (the
// flag was dropped on that path before), or a resync that finds the rows
// back.
func TestPGRefusedMassDeleteStaysVisible(t *testing.T) {
	for _, tc := range []struct {
		name     string
		rowsBack bool // the rows come back, and a plain resync runs
		contacts int  // after acting
	}{
		{"deletions allowed", false, 1},
		{"rows back", true, 41},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newLogicalEnv(t, 40)
			if err := e.run(); err != nil {
				t.Fatalf("first pass: %v", err)
			}
			e.exec(`CREATE TABLE ` + e.table + `_saved AS SELECT * FROM ` + e.table)
			e.exec(`TRUNCATE ` + e.table)
			if err := e.run(); !errors.Is(err, reconcile.ErrMassDelete) {
				t.Fatalf("pass after TRUNCATE: %v, want the mass-delete guard", err)
			}
			srv := e.adminServer()
			e.wantRefused(srv, "after the refusal")

			// A later pass goes through and finds nothing to delete.
			e.exec(`INSERT INTO ` + e.table + ` (id, first_name, last_name) VALUES (100, 'New', 'Row')`)
			if err := e.run(); err != nil {
				t.Fatalf("pass after the refusal: %v", err)
			}
			e.check([]string{"New Row", "First1 Last1"}, nil, 41)
			e.wantRefused(srv, "after a pass that went through")

			// A restart on the same state file.
			srv.Close()
			if err := e.d.Close(); err != nil {
				t.Fatal(err)
			}
			d, err := daemon.New(context.Background(), e.cfg, daemon.Options{Log: quiet()})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = d.Close() })
			e.d = d
			srv = e.adminServer()
			e.wantRefused(srv, "after a restart")

			cl := &admin.Client{BaseURL: srv.URL}
			req := admin.ResyncRequest{Connector: "db", AllowMassDelete: true}
			if tc.rowsBack {
				e.exec(`INSERT INTO ` + e.table + ` SELECT * FROM ` + e.table + `_saved`)
				req.AllowMassDelete = false
			}
			if _, err := cl.Resync(context.Background(), req); err != nil {
				t.Fatalf("resync %+v: %v", req, err)
			}
			e.check([]string{"New Row"}, nil, tc.contacts)
			st, err := e.d.Status(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if r := st.Connectors[0].RefusedDelete; r != nil {
				t.Errorf("after acting the status still shows %+v", r)
			}
			if page := get(t, srv.URL+"/"); strings.Contains(page, `id="refused-delete-db"`) {
				t.Error("after acting the health page still shows the refusal")
			}
		})
	}
}

// adminServer serves the daemon's admin API and health page.
func (e *logicalEnv) adminServer() *httptest.Server {
	srv := httptest.NewServer((&admin.Server{Daemon: e.d, Log: logrus.NewEntry(quiet())}).Handler())
	e.t.Cleanup(srv.Close)
	return srv
}

// wantRefused checks that /status and the health page show connector
// db's refused mass delete of its 40 rows, with the command to act on it.
func (e *logicalEnv) wantRefused(srv *httptest.Server, when string) {
	e.t.Helper()
	st, err := (&admin.Client{BaseURL: srv.URL}).Status(context.Background())
	if err != nil {
		e.t.Fatal(err)
	}
	r := st.Connectors[0].RefusedDelete
	if r == nil {
		e.t.Fatalf("%s: /status shows no refused mass delete", when)
	}
	const command = "syncd resync --config syncd.yaml --connector db --allow-mass-delete"
	if !strings.Contains(r.Reason, "would delete 40 of 40 linked contacts") || r.Command != command || r.Kind != "resync" {
		e.t.Errorf("%s: /status shows %+v, want the 40 deletions refused and %q", when, r, command)
	}
	rec := httptest.NewRecorder()
	e.d.Metrics().Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	if want := `syncd_mass_delete_refused{connector="db"} 1`; !strings.Contains(rec.Body.String(), want) {
		e.t.Errorf("%s: metrics lack %s", when, want)
	}
	page := get(e.t, srv.URL+"/")
	for _, want := range []string{`id="refused-delete-db"`, "mass delete refused", "<code>" + command + "</code>", "would delete 40 of 40"} {
		if !strings.Contains(page, want) {
			e.t.Errorf("%s: the health page lacks %s", when, fmt.Sprintf("%q", want))
		}
	}
}
