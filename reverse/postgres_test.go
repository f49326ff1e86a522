package reverse

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/syncd-io/syncd/connector"
	"github.com/syncd-io/syncd/connector/postgres"
	"github.com/syncd-io/syncd/internal/testkit/pgtest"
	"github.com/syncd-io/syncd/mapping"
	"github.com/syncd-io/syncd/workspace"
)

// pgWorld is a PostgreSQL table synced forward into an env's workspace,
// with an applier writing the app's edits back to it. The table refuses
// a last name starting with "Refused" (a check constraint) and an e-mail
// another row has (UNIQUE); a BEFORE UPDATE trigger moves updated_at, counts
// every UPDATE the table sees in the sequence <table>_tries (a sequence is
// not rolled back with a refused statement), and fails the first two
// updates to the last name "Busy" with a serialization failure (SQLSTATE
// 40001), as a busy server does.
type pgWorld struct {
	e      *env
	pool   *pgxpool.Pool
	table  string
	src    connector.Source
	target *Target
	crm    crmSync
}

const pgRows = 3

func newPGWorld(t *testing.T, opts Options) *pgWorld {
	t.Helper()
	return newPGWorldWith(t, opts, nil)
}

// newPGWorldWith is newPGWorld with the connector's settings changed by
// mod (after the test's own: changes poll).
func newPGWorldWith(t *testing.T, opts Options, mod func(*postgres.Settings)) *pgWorld {
	t.Helper()
	w := &pgWorld{e: newEnv(t, nil), pool: pgtest.Connect(t)}
	schema := pgtest.NewSchema(t, w.pool)
	w.table = schema + ".people"
	pgtest.Exec(t, w.pool, `CREATE TABLE `+w.table+` (id bigserial PRIMARY KEY, first_name text,
		last_name text CHECK (last_name NOT LIKE 'Refused%'), email text UNIQUE, updated_at timestamptz NOT NULL DEFAULT now())`)
	pgtest.Exec(t, w.pool, `CREATE SEQUENCE `+w.table+`_tries`)
	pgtest.Exec(t, w.pool, `CREATE SEQUENCE `+w.table+`_busy`)
	pgtest.Exec(t, w.pool, `CREATE FUNCTION `+schema+`.touch() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN
		PERFORM nextval('`+w.table+`_tries');
		IF NEW.last_name = 'Busy' AND nextval('`+w.table+`_busy') <= 2 THEN
			RAISE EXCEPTION 'could not serialize access due to concurrent update' USING ERRCODE = '40001';
		END IF;
		NEW.updated_at = clock_timestamp();
		RETURN NEW;
	END $$`)
	pgtest.Exec(t, w.pool, `CREATE TRIGGER touch BEFORE UPDATE ON `+w.table+` FOR EACH ROW EXECUTE FUNCTION `+schema+`.touch()`)
	pgtest.Exec(t, w.pool, `INSERT INTO `+w.table+` (first_name, last_name, email)
		SELECT 'First' || i, 'Last' || i, 'p' || i || '@example.com' FROM generate_series(1, $1::int) AS i`, pgRows)

	m, err := mapping.Compile(mapping.Spec{ExternalID: "id", Fields: map[string]mapping.FieldSpec{
		"firstName": {From: "first_name"}, "lastName": {From: "last_name"}, "emails.work": {From: "email"},
	}}, mapping.Both, nil)
	if err != nil {
		t.Fatal(err)
	}
	typ, _ := connector.Lookup(postgres.TypeName)
	set := postgres.NewSettings()
	set.DSN, set.Table, set.Changes = pgtest.URL(), w.table, postgres.ChangesPoll
	if mod != nil {
		mod(set)
	}
	if w.src, err = typ.Open(context.Background(), connector.Options{Name: "pg", Settings: set, Fields: m.SourceFields(), Log: quietLog()}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.src.Close() })
	w.target = &Target{Name: "pg", Source: "custom-postgres", Mapper: m, Writer: w.src.(connector.Writer), Direction: mapping.Both}
	w.crm = w.e.syncCRM(t, postgres.TypeName, w.src, w.target, pgRows)
	opts.Store, opts.Workspace, opts.Targets, opts.Log = StoreOf(w.e.store), w.e.ws, []*Target{w.target}, quietLog()
	if w.crm.applier, err = New(opts); err != nil {
		t.Fatal(err)
	}
	return w
}

// edit changes the contact of row id in the app and queues the change.
func (w *pgWorld) edit(t *testing.T, id int, p workspace.DefaultFieldsPatch) workspace.Contact {
	t.Helper()
	l, ok, err := w.e.store.Links.Get("pg", strconv.Itoa(id))
	if err != nil || !ok {
		t.Fatalf("link of row %d: %v %v", id, ok, err)
	}
	c := w.e.appPatch(l.ContactID, workspace.ContactPatch{DefaultFields: &p})
	if n, err := w.crm.applier.CatchUp(context.Background(), "pg"); err != nil || n != 1 {
		t.Fatalf("catch-up queued %d, %v", n, err)
	}
	return c
}

// rounds runs n rounds of the applier.
func (w *pgWorld) rounds(t *testing.T, n int) {
	t.Helper()
	for range n {
		if _, err := w.crm.applier.Round(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
}

// tries is the number of UPDATEs the table saw.
func (w *pgWorld) tries(t *testing.T) int64 {
	t.Helper()
	var n int64
	var called bool
	if err := w.pool.QueryRow(context.Background(), "SELECT last_value, is_called FROM "+w.table+"_tries").Scan(&n, &called); err != nil {
		t.Fatal(err)
	}
	if !called {
		return 0
	}
	return n
}

func (w *pgWorld) column(t *testing.T, id int, col string) string {
	t.Helper()
	var v *string
	if err := w.pool.QueryRow(context.Background(), fmt.Sprintf("SELECT %s FROM %s WHERE id = $1", col, w.table), id).Scan(&v); err != nil {
		t.Fatal(err)
	}
	if v == nil {
		return "<null>"
	}
	return *v
}

// TestPostgresWriteBackFailures: app edits written back to a PostgreSQL
// table. An update the table refuses for good (a check constraint, a
// unique key) is sent once and set aside as one dead letter naming the column,
// the SQLSTATE and PostgreSQL's message, however many rounds follow; an
// update that fails with a passing condition (a serialization failure,
// twice) is sent again and written.
func TestPostgresWriteBackFailures(t *testing.T) {
	for _, tc := range []struct {
		name   string
		patch  workspace.DefaultFieldsPatch
		email  string // the new work e-mail, if set
		col    string
		want   string // the column's value at the end
		tries  int64  // UPDATEs the table saw
		reason []string
	}{
		{name: "check constraint", patch: workspace.DefaultFieldsPatch{LastName: workspace.Some("Refused-2")}, col: "last_name", want: "Last2", tries: 1,
			reason: []string{"refused (code 23514)", `violates check constraint "people_last_name_check"`}},
		{name: "unique", email: "p1@example.com", col: "email", want: "p2@example.com", tries: 1,
			reason: []string{"field email refused (code 23505)", `violates unique constraint "people_email_key"`}},
		{name: "serialization failure, then written", patch: workspace.DefaultFieldsPatch{LastName: workspace.Some("Busy")}, col: "last_name", want: "Busy", tries: 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newPGWorld(t, Options{})
			if tc.email != "" {
				l, _, _ := w.e.store.Links.Get("pg", "2")
				old, _ := w.e.ws.GetContact(context.Background(), l.ContactID)
				item := old.DefaultFields.Emails[0]
				tc.patch.Emails = []workspace.ItemPatch{{ID: item.ID, Name: item.Name, Value: &tc.email}}
			}
			c := w.edit(t, 2, tc.patch)
			w.rounds(t, DefaultMaxAttempts+2)
			if got := w.tries(t); got != tc.tries {
				t.Errorf("the table saw %d UPDATEs, want %d", got, tc.tries)
			}
			if got := w.column(t, 2, tc.col); got != tc.want {
				t.Errorf("row 2 %s = %q, want %q", tc.col, got, tc.want)
			}
			if n, _ := w.e.store.Inbox.Count(); n != 0 {
				t.Errorf("%d events left in the inbox", n)
			}
			dls, err := w.e.store.DeadLetters.List("pg")
			if err != nil {
				t.Fatal(err)
			}
			st := w.crm.applier.Stats()
			if len(tc.reason) == 0 {
				if len(dls) != 0 || st.Written != 1 || st.Failed != 0 {
					t.Fatalf("dead letters %+v, applier %+v: want the update written", dls, st)
				}
				return
			}
			if len(dls) != 1 || dls[0].Key != c.ID || dls[0].Operation != opWriteBack || st.Failed != 1 || st.Written != 0 {
				t.Fatalf("dead letters %+v, applier %+v: want one for contact %s", dls, st, c.ID)
			}
			for _, want := range tc.reason {
				if !strings.Contains(dls[0].Reason, want) {
					t.Errorf("dead letter reason %q does not name %q", dls[0].Reason, want)
				}
			}
		})
	}
}

// touchingWriter is another application editing a row between syncd's
// read and its write: before each of the first touches Write calls (all,
// when touches is negative) it updates row 2, which moves its updated_at.
type touchingWriter struct {
	connector.Writer
	w       *pgWorld
	t       *testing.T
	touches int
}

func (tw *touchingWriter) Write(ctx context.Context, changes []connector.Change) ([]connector.WriteResult, error) {
	if tw.touches != 0 {
		tw.touches--
		pgtest.Exec(tw.t, tw.w.pool, "UPDATE "+tw.w.table+" SET first_name = first_name WHERE id = 2")
	}
	return tw.Writer.Write(ctx, changes)
}

// TestPostgresWriteBackPutOff: a write-back whose row changes between
// each read and write is put off (the conditional UPDATE finds updated_at
// moved) and decided anew next round. Put off a few times, it is written
// once the row holds still; put off every time, it ends as one dead letter
// naming the record and the count after DefaultMaxPutOffs rounds, counted
// in Stats.PutOffDeadLetters, and the row is never overwritten unseen.
func TestPostgresWriteBackPutOff(t *testing.T) {
	for _, tc := range []struct {
		name    string
		touches int
		putOffs int64
		want    string
		gaveUp  bool
	}{
		{name: "put off three times, then written", touches: 3, putOffs: 3, want: "Edited"},
		{name: "put off forever", touches: -1, putOffs: DefaultMaxPutOffs, want: "Last2", gaveUp: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newPGWorld(t, Options{})
			w.target.Writer = &touchingWriter{Writer: w.target.Writer, w: w, t: t, touches: tc.touches}
			c := w.edit(t, 2, workspace.DefaultFieldsPatch{LastName: workspace.Some("Edited")})
			w.rounds(t, DefaultMaxPutOffs+5)
			if got := w.column(t, 2, "last_name"); got != tc.want {
				t.Errorf("row 2 last_name = %q, want %q", got, tc.want)
			}
			if n, _ := w.e.store.Inbox.Count(); n != 0 {
				t.Errorf("%d events left in the inbox after %d rounds", n, DefaultMaxPutOffs+5)
			}
			st := w.crm.applier.Stats()
			dls, err := w.e.store.DeadLetters.List("pg")
			if err != nil {
				t.Fatal(err)
			}
			if st.PutOffs != tc.putOffs {
				t.Errorf("%d put-offs, want %d", st.PutOffs, tc.putOffs)
			}
			if !tc.gaveUp {
				if len(dls) != 0 || st.Written != 1 || st.PutOffDeadLetters != 0 {
					t.Fatalf("dead letters %+v, applier %+v: want the edit written", dls, st)
				}
				return
			}
			if len(dls) != 1 || dls[0].Key != c.ID || st.PutOffDeadLetters != 1 || st.Failed != 1 || st.Written != 0 {
				t.Fatalf("dead letters %+v, applier %+v: want one put-off dead letter for contact %s", dls, st, c.ID)
			}
			for _, want := range []string{"record 2", fmt.Sprintf("put off %d times", DefaultMaxPutOffs), "changed"} {
				if !strings.Contains(dls[0].Reason, want) {
					t.Errorf("dead letter reason %q does not name %q", dls[0].Reason, want)
				}
			}
		})
	}
}
