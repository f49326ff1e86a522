package reconcile

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/syncd-io/syncd/connector"
	"github.com/syncd-io/syncd/connector/postgres"
	"github.com/syncd-io/syncd/internal/testkit/pgtest"
	"github.com/syncd-io/syncd/mapping"
	"github.com/syncd-io/syncd/policy"
	"github.com/syncd-io/syncd/workspace"
	"github.com/syncd-io/syncd/workspace/emulator"
)

// pgStream syncs a PostgreSQL table through logical replication (a slot
// of the test's own), with the default onSourceDelete: ignore.
type pgStream struct {
	*env
	pool  *pgxpool.Pool
	table string
	r     *Reconciler
}

// newPGStream creates the table people (id, name, notes stored out of
// line when long) with rows 1..n, notes of each over the TOAST threshold,
// and a reconciler streaming it in batches of batchSize.
func newPGStream(t *testing.T, n, batchSize int) *pgStream {
	return newPGStreamOf(t, n, batchSize, "to-workspace")
}

// newPGStreamOf is newPGStream with the mapping's direction.
func newPGStreamOf(t *testing.T, n, batchSize int, direction policy.Direction) *pgStream {
	e := &pgStream{env: newEnv(t, 0, emulator.Options{}), pool: pgtest.Connect(t)}
	e.table = pgtest.NewSchema(t, e.pool) + ".people"
	pgtest.Exec(t, e.pool, `CREATE TABLE `+e.table+` (id bigint PRIMARY KEY, name text NOT NULL, notes text,
		updated_at timestamptz NOT NULL DEFAULT now())`)
	pgtest.Exec(t, e.pool, `ALTER TABLE `+e.table+` ALTER COLUMN notes SET STORAGE EXTERNAL`)
	for id := 1; id <= n; id++ {
		pgtest.Exec(t, e.pool, `INSERT INTO `+e.table+` (id, name, notes) VALUES ($1, $2, $3)`, id, fmt.Sprintf("Name%d", id), longNote(id))
	}
	slot := pgtest.Slot(t, e.pool)
	typ, _ := connector.Lookup(postgres.TypeName)
	settings := postgres.NewSettings()
	settings.DSN = pgtest.URL()
	settings.Table = e.table
	settings.BatchSize = batchSize
	settings.Changes = postgres.ChangesLogical
	settings.Slot = slot
	src, err := typ.Open(context.Background(), connector.Options{Name: "crm", Settings: settings, Log: quietLog()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { src.Close() })
	m, err := mapping.Compile(mapping.Spec{
		ExternalID: "id",
		Fields: map[string]mapping.FieldSpec{
			"firstName": {From: "name"},
			"company":   {From: "notes"},
		},
	}, direction, nil)
	if err != nil {
		t.Fatal(err)
	}
	e.r, err = New(Options{
		Connector: "crm", Source: testSource, Type: typ, Reader: src, Mapper: m,
		Store: StoreOf(e.store), Workspace: e.ws, Workers: 4, Backoff: time.Millisecond, MaxAttempts: 6, Log: quietLog(),
	})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func longNote(id int) string { return fmt.Sprintf("Notes of %d %s", id, strings.Repeat("y", 4000)) }

func (e *pgStream) run() Summary {
	e.t.Helper()
	sum, err := e.r.Run(context.Background())
	if err != nil {
		e.t.Fatalf("run: %v (summary %v)", err, sum)
	}
	return sum
}

// contacts returns the workspace's contacts of the test source by
// externalId, failing on two for one.
func (e *pgStream) contacts() map[string]workspace.Contact {
	e.t.Helper()
	out := map[string]workspace.Contact{}
	for _, c := range e.emu.Contacts() {
		if c.ExternalID == nil {
			e.t.Errorf("contact %s has no externalId", c.ID)
			continue
		}
		if _, dup := out[*c.ExternalID]; dup {
			e.t.Errorf("two contacts for externalId %s", *c.ExternalID)
		}
		out[*c.ExternalID] = c
	}
	return out
}

// TestPostgresStreamKeepsUnreadToastedValues: a transaction edits the
// names of five rows, leaving their TOASTed notes alone; a later one
// deletes four of them before syncd reads the stream, which it reads in
// batches of two (the edit cut across batches). Each contact takes the
// new name and keeps its company (mapped from notes): a value syncd
// did not read is never written as empty. Before the fix, the four
// deleted rows' contacts lost their company.
func TestPostgresStreamKeepsUnreadToastedValues(t *testing.T) {
	e := newPGStream(t, 5, 2)
	if sum := e.run(); sum.Created != 5 {
		t.Fatalf("first pass: %v, want 5 created", sum)
	}
	pgtest.Exec(t, e.pool, `UPDATE `+e.table+` SET name = name || ' Edited'`)
	pgtest.Exec(t, e.pool, `DELETE FROM `+e.table+` WHERE id <= 4`)
	before := e.emu.Stats()
	e.run()
	if posts, _, deletes := e.writes(before); posts+deletes != 0 {
		t.Errorf("%d POSTs %d DELETEs, want none (onSourceDelete: ignore)", posts, deletes)
	}
	cs := e.contacts()
	if len(cs) != 5 {
		t.Fatalf("%d contacts, want 5", len(cs))
	}
	for id := 1; id <= 5; id++ {
		c := cs[fmt.Sprint(id)]
		if got, want := deref(c.DefaultFields.FirstName), fmt.Sprintf("Name%d Edited", id); got != want {
			t.Errorf("contact of row %d: firstName %q, want %q", id, got, want)
		}
		if got := deref(c.DefaultFields.Company); got != longNote(id) {
			t.Errorf("contact of row %d: company %.30q (%d chars), want its notes kept", id, got, len(got))
		}
	}

	// Row 1 comes back with the same name and no notes: its values are
	// read whole now, and the company goes (the kept value is not taken
	// for what the row says).
	pgtest.Exec(t, e.pool, `INSERT INTO `+e.table+` (id, name, notes) VALUES (1, 'Name1 Edited', NULL)`)
	e.run()
	if c := e.contacts()["1"]; deref(c.DefaultFields.Company) != "" {
		t.Errorf("row 1 back without notes: contact's company %.30q, want none", deref(c.DefaultFields.Company))
	}
}

// TestPostgresStreamKeyChangeMovesTheLink: UPDATE ... SET id = ... keeps
// the row's contact, under the new externalId, with no create and no
// delete (the default onSourceDelete: ignore would otherwise leave two
// contacts for one row).
func TestPostgresStreamKeyChangeMovesTheLink(t *testing.T) {
	e := newPGStream(t, 3, 64)
	e.run()
	before := e.contacts()["2"]
	if before.ID == "" {
		t.Fatal("no contact for row 2 after the first pass")
	}
	pgtest.Exec(t, e.pool, `UPDATE `+e.table+` SET id = 20, name = 'Renumbered' WHERE id = 2`)
	stats := e.emu.Stats()
	sum := e.run()
	if posts, _, deletes := e.writes(stats); posts+deletes != 0 {
		t.Errorf("key change: %d POSTs %d DELETEs (%v), want the contact moved", posts, deletes, sum)
	}
	cs := e.contacts()
	after, ok := cs["20"]
	switch {
	case len(cs) != 3:
		t.Errorf("%d contacts, want 3 (one per row)", len(cs))
	case !ok:
		t.Fatalf("no contact with externalId 20; contacts %v", keysOf(cs))
	case after.ID != before.ID:
		t.Errorf("row 20 has contact %s, want %s (the contact of row 2)", after.ID, before.ID)
	case deref(after.DefaultFields.FirstName) != "Renumbered":
		t.Errorf("firstName %q, want the row's new name", deref(after.DefaultFields.FirstName))
	}
	if _, ok := cs["2"]; ok {
		t.Error("a contact still carries externalId 2")
	}
	if l, ok, _ := e.store.Links.Get("crm", "20"); !ok || l.ContactID != before.ID || l.RecordID != "20" {
		t.Errorf("link of 20: contact %s record %s (found %v), want contact %s, record 20", l.ContactID, l.RecordID, ok, before.ID)
	}
	if _, ok, _ := e.store.Links.Get("crm", "2"); ok {
		t.Error("link of 2 kept")
	}
	// Nothing more to do: the next pass writes nothing.
	stats = e.emu.Stats()
	e.run()
	if posts, patches, deletes := e.writes(stats); posts+patches+deletes != 0 {
		t.Errorf("pass after the move wrote %d/%d/%d, want nothing", posts, patches, deletes)
	}
}

func keysOf(m map[string]workspace.Contact) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
