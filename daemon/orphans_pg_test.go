package daemon_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/syncd-io/syncd/admin"
	"github.com/syncd-io/syncd/daemon"
	"github.com/syncd-io/syncd/internal/testkit/pgtest"
)

// TestPGOrphanedSlotOnStatusPageAndMetrics (issue 30): a running daemon
// finds the slot and publication a removed connector left on the
// database of a configured postgres connector, and shows it in /status,
// on the health page (with the WAL it holds and the command that drops
// it) and in syncd_replication_orphans and
// syncd_replication_orphan_wal_bytes; its own connector's slot is not an
// orphan. Once dropped, the next look clears it.
func TestPGOrphanedSlotOnStatusPageAndMetrics(t *testing.T) {
	e := newLogicalEnv(t, 5)
	orphan := pgtest.Name(t, "syncd_gone_")
	pgtest.Exec(t, e.pool, `SELECT pg_create_logical_replication_slot($1, 'pgoutput')`, orphan)
	pgtest.Exec(t, e.pool, `CREATE PUBLICATION `+pgx.Identifier{orphan}.Sanitize()+` FOR TABLE `+e.table)
	t.Cleanup(func() {
		_, _ = e.pool.Exec(context.Background(), `SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE slot_name = $1`, orphan)
		_, _ = e.pool.Exec(context.Background(), `DROP PUBLICATION IF EXISTS `+pgx.Identifier{orphan}.Sanitize())
	})
	e.exec(`INSERT INTO ` + e.table + ` (first_name) SELECT 'n' || i FROM generate_series(1, 500) AS i`)

	ctx, cancel := context.WithCancel(context.Background())
	r, err := e.d.Start(ctx, daemon.ForwardPart)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cancel(); _ = r.Wait() })
	waitUntil(t, 30*time.Second, "the first pass", func() bool { return len(e.names()) == 505 })

	var found admin.ReplicationOrphan
	waitUntil(t, 30*time.Second, "the orphan in /status", func() bool {
		st, err := e.d.Status(context.Background())
		if err != nil {
			return false
		}
		for _, o := range st.ReplicationOrphans {
			if o.Slot == orphan {
				found = o
				return true
			}
		}
		return false
	})
	if found.Publication != orphan || found.HeldBytes <= 0 || found.Database != "127.0.0.1:5432/test" || !strings.HasSuffix(found.Drop, "--slot "+orphan) {
		t.Errorf("status shows %+v, want the slot with its publication, the WAL it holds and the drop command", found)
	}
	st, err := e.d.Status(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range st.ReplicationOrphans {
		if strings.HasPrefix(o.Slot, "syncd_testpgorphanedslot") && o.Slot != orphan {
			t.Errorf("the connector's own slot %s is shown as an orphan", o.Slot)
		}
	}

	srv := e.adminServer()
	page := get(t, srv.URL+"/")
	for _, want := range []string{`<tr id="orphan-` + orphan + `">`, "<code>" + orphan + "</code>", found.Held, found.Drop} {
		if !strings.Contains(page, want) {
			t.Errorf("the health page lacks %q", want)
		}
	}
	rec := httptest.NewRecorder()
	e.d.Metrics().Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	if want := `syncd_replication_orphan_wal_bytes{database="127.0.0.1:5432/test",slot="` + orphan + `"}`; !strings.Contains(rec.Body.String(), want) {
		t.Errorf("metrics lack %s", want)
	}

	e.exec(`SELECT pg_drop_replication_slot('` + orphan + `')`)
	e.exec(`DROP PUBLICATION ` + pgx.Identifier{orphan}.Sanitize())
	left, err := e.d.CheckReplicationOrphans(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range left {
		if o.Slot == orphan || o.Publication == orphan {
			t.Errorf("after the drop the daemon still shows %+v", o)
		}
	}
	if page := get(t, srv.URL+"/"); strings.Contains(page, orphan) {
		t.Error("after the drop the health page still shows the orphan")
	}
}

// get returns the body of a GET that must answer 200.
func get(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d, %v", url, resp.StatusCode, err)
	}
	return string(body)
}
