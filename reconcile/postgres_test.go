package reconcile

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/sirupsen/logrus"

	"github.com/syncd-io/syncd/connector"
	"github.com/syncd-io/syncd/connector/postgres"
	"github.com/syncd-io/syncd/internal/testkit/pgtest"
	"github.com/syncd-io/syncd/mapping"
	"github.com/syncd-io/syncd/policy"
	"github.com/syncd-io/syncd/progress"
	"github.com/syncd-io/syncd/test/emutest"
	"github.com/syncd-io/syncd/workspace/emulator"
)

// pgEnv syncs a PostgreSQL table whose rows share few updated_at values.
type pgEnv struct {
	*env
	pool     *pgxpool.Pool
	table    string
	wsDelete policy.Delete
	// spec, log and progress replace the test mapping, the quiet log and
	// no progress, when set.
	spec     *mapping.Spec
	log      *logrus.Entry
	progress *progress.Tracker
}

func newPGEnv(t *testing.T, rows int, emuOpts emulator.Options) *pgEnv {
	e := &pgEnv{env: newEnv(t, 0, emuOpts), pool: pgtest.Connect(t)}
	schema := pgtest.NewSchema(t, e.pool)
	e.table = schema + ".people"
	pgtest.Exec(t, e.pool, fmt.Sprintf(`CREATE TABLE %s (
		id bigint PRIMARY KEY, first_name text, last_name text, email text, mobile text, score text,
		updated_at timestamptz NOT NULL)`, e.table))
	// Ten rows per timestamp: ties everywhere, and across batch edges.
	pgtest.Exec(t, e.pool, fmt.Sprintf(`INSERT INTO %s
		SELECT i, 'First'||i, 'Last'||i||'-v1', 'person'||i||'@example.com', '+1 (415) 555-'||lpad(i::text, 4, '0'), (i %% 7)::text,
		       timestamptz '2026-01-01' + (i / 10) * interval '1 second'
		FROM generate_series(1, $1) AS i`, e.table), rows)
	e.rows = e.rows[:1]
	for i := 1; i <= rows; i++ {
		e.rows = append(e.rows, row(i, "v1"))
	}
	return e
}

func (e *pgEnv) reconciler() *Reconciler {
	e.t.Helper()
	typ, _ := connector.Lookup(postgres.TypeName)
	settings := postgres.NewSettings()
	settings.DSN = pgtest.URL()
	settings.Table = e.table
	settings.BatchSize = 64
	settings.Changes = postgres.ChangesPoll
	src, err := typ.Open(context.Background(), connector.Options{Name: "crm", Settings: settings, Log: quietLog()})
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { src.Close() })
	spec, log := testSpec(), quietLog()
	if e.spec != nil {
		spec = *e.spec
	}
	if e.log != nil {
		log = e.log
	}
	m, err := mapping.Compile(spec, "to-workspace", nil)
	if err != nil {
		e.t.Fatal(err)
	}
	m.SetCustomFieldTypes(e.ws)
	r, err := New(Options{
		Connector: "crm", Source: testSource, Type: typ, Reader: src, Mapper: m,
		Store: StoreOf(e.store), Workspace: e.ws, Workers: 4, Backoff: time.Millisecond, MaxAttempts: 6, Log: log,
		OnWorkspaceDelete: e.wsDelete, Progress: e.progress,
	})
	if err != nil {
		e.t.Fatal(err)
	}
	return r
}

func (e *pgEnv) run() Summary {
	e.t.Helper()
	sum, err := e.reconciler().Run(context.Background())
	if err != nil {
		e.t.Fatalf("run: %v (summary %v)", err, sum)
	}
	return sum
}

// change edits rows like an application would: new values, updated_at
// moved to one shared new time.
func (e *pgEnv) change(ids ...int) {
	for _, id := range ids {
		pgtest.Exec(e.t, e.pool, fmt.Sprintf(`UPDATE %s SET last_name = $2, updated_at = timestamptz '2026-06-01' WHERE id = $1`, e.table), id, fmt.Sprintf("Last%d-v2", id))
		e.rows[id] = row(id, "v2")
	}
}

func TestPostgresForward(t *testing.T) {
	e := newPGEnv(t, 500, emulator.Options{})
	before := e.emu.Stats()
	sum := e.run()
	if posts, _, _ := e.writes(before); sum.Created != 500 || posts != 500 {
		t.Fatalf("initial sync: %v, %d POSTs; want 500 creates", sum, posts)
	}
	e.assertConverged()

	before = e.emu.Stats()
	sum = e.run()
	if posts, patches, deletes := e.writes(before); posts+patches+deletes != 0 {
		t.Fatalf("unchanged rerun wrote %d/%d/%d (%v); want nothing", posts, patches, deletes, sum)
	}

	e.change(3, 50, 51, 52, 53, 54, 55, 56, 57, 499) // ten rows, one shared updated_at
	before = e.emu.Stats()
	sum = e.run()
	if posts, patches, deletes := e.writes(before); patches != 10 || posts+deletes != 0 {
		t.Fatalf("10 changed rows: %d POST %d PATCH %d DELETE (%v); want exactly 10 PATCHes", posts, patches, deletes, sum)
	}
	e.assertConverged()

	e.loseState()
	before = e.emu.Stats()
	sum = e.run()
	if posts, patches, _ := e.writes(before); posts+patches != 0 {
		t.Fatalf("after losing the state file: %d POSTs %d PATCHes (%v); want none", posts, patches, sum)
	}
	e.assertConverged()
}

func TestPostgresFaultsConverge(t *testing.T) {
	e := newPGEnv(t, 200, emulator.Options{FaultRate: 0.2, Seed: 7})
	for i := 0; i < 5; i++ {
		if _, err := e.reconciler().Run(context.Background()); err != nil {
			t.Logf("run %d stopped early under faults: %v", i, err)
		}
		if i == 1 {
			e.change(10, 11, 12, 13, 14)
		}
	}
	e.emu.SetFaultRate(0)
	e.run()
	e.assertConverged()
	if st := e.emu.Stats(); st.FaultsByKind["lost"] == 0 {
		t.Errorf("no lost answer was injected (faults %v)", st.FaultsByKind)
	}
}

// A contact a person deleted in the app, whose record then changed before
// the deletion reached the table, is not created again when the
// connector carries workspace deletions (onWorkspaceDelete: delete).
func TestPostgresWorkspaceDeletionIsNotUndone(t *testing.T) {
	e := newPGEnv(t, 20, emulator.Options{})
	e.wsDelete = policy.DeleteRemove
	e.run()
	l, _, _ := e.store.Links.Get("crm", "7")
	emutest.NewApp(t, e.emu.URL).Delete(l.ContactID)
	e.change(7)
	before := e.emu.Stats()
	e.run()
	if posts, _, _ := e.writes(before); posts != 0 {
		t.Fatalf("the deleted contact was created again (%d POSTs)", posts)
	}
	var n int
	if err := e.pool.QueryRow(context.Background(), fmt.Sprintf("SELECT count(*) FROM %s WHERE id = 7", e.table)).Scan(&n); err != nil || n != 0 {
		t.Fatalf("row 7 still in the table (%d, %v), want deleted", n, err)
	}
	if _, ok, _ := e.store.Links.Get("crm", "7"); ok {
		t.Error("link 7 kept after the deletion")
	}
}

// TestPostgresWorkspaceDeletionFollowsTheWriteRule: the forward pass's
// delete of the row of a contact deleted in the workspace follows the one
// rule of connector.Dispose. A serialization failure (SQLSTATE 40001, a
// passing condition) is retried and the row deleted; a delete the table
// refuses for good (a foreign key, 23503) is tried once and set aside.
func TestPostgresWorkspaceDeletionFollowsTheWriteRule(t *testing.T) {
	for _, tc := range []struct {
		name      string
		trigger   string // the BEFORE DELETE trigger's body
		deleted   bool
		attempts  int64 // deletes the table saw
		permanent bool
	}{
		{name: "serialization failure twice, then deleted", deleted: true, attempts: 3,
			trigger: `IF nextval('%[1]s_tries') <= 2 THEN RAISE EXCEPTION 'could not serialize access' USING ERRCODE = '40001'; END IF; RETURN OLD;`},
		{name: "refused by a foreign key", attempts: 1, permanent: true,
			trigger: `PERFORM nextval('%[1]s_tries'); RAISE EXCEPTION 'row is still referenced by an invoice' USING ERRCODE = '23503';`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newPGEnv(t, 20, emulator.Options{})
			e.wsDelete = policy.DeleteRemove
			e.run()
			pgtest.Exec(t, e.pool, fmt.Sprintf(`CREATE SEQUENCE %s_tries`, e.table))
			pgtest.Exec(t, e.pool, fmt.Sprintf(`CREATE FUNCTION %[1]s_guard() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN %[2]s END $$`,
				e.table, fmt.Sprintf(tc.trigger, e.table)))
			pgtest.Exec(t, e.pool, fmt.Sprintf(`CREATE TRIGGER guard BEFORE DELETE ON %[1]s FOR EACH ROW EXECUTE FUNCTION %[1]s_guard()`, e.table))
			l, _, _ := e.store.Links.Get("crm", "7")
			emutest.NewApp(t, e.emu.URL).Delete(l.ContactID)
			e.change(7)
			sum := e.run()

			var rows, tries int64
			queryPG(t, e.pool, fmt.Sprintf("SELECT count(*) FROM %s WHERE id = 7", e.table), &rows)
			queryPG(t, e.pool, fmt.Sprintf("SELECT last_value FROM %s_tries", e.table), &tries)
			if (rows == 0) != tc.deleted || tries != tc.attempts {
				t.Fatalf("row 7 deleted %v after %d deletes, want deleted %v after %d (summary %v)", rows == 0, tries, tc.deleted, tc.attempts, sum)
			}
			dls, err := e.store.DeadLetters.List("crm")
			if err != nil {
				t.Fatal(err)
			}
			if !tc.permanent {
				if len(dls) != 0 || sum.Failed != 0 {
					t.Fatalf("dead letters %+v, summary %v; want none", dls, sum)
				}
				return
			}
			if len(dls) != 1 || !strings.Contains(dls[0].Reason, "23503") || !strings.Contains(dls[0].Reason, "still referenced") {
				t.Fatalf("dead letters %+v, want one naming the refusal", dls)
			}
			var p deadPayload
			if err := json.Unmarshal(dls[0].Payload, &p); err != nil || !p.Permanent {
				t.Fatalf("dead letter payload %s: want it permanent", dls[0].Payload)
			}
		})
	}
}

func queryPG(t *testing.T, pool *pgxpool.Pool, sql string, dest any) {
	t.Helper()
	if err := pool.QueryRow(context.Background(), sql).Scan(dest); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}
