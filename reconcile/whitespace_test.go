package reconcile

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/syncd-io/syncd/connector"
	"github.com/syncd-io/syncd/connector/postgres"
	"github.com/syncd-io/syncd/internal/testkit/pgtest"
	"github.com/syncd-io/syncd/mapping"
	"github.com/syncd-io/syncd/workspace/emulator"
)

// TestIDsDifferingByWhitespaceAreRefusedAsDuplicates: a PostgreSQL table
// with text ids where "p100" and " p100" are two rows (two people). Ids are
// keyed without the whitespace around them, so the two are one externalId:
// both are refused under one dead letter naming them, in one batch or
// across passes, and nothing is written to the contact linked to the id
// until one of them is gone. An id alone with whitespace around it syncs
// under its trimmed externalId.
func TestIDsDifferingByWhitespaceAreRefusedAsDuplicates(t *testing.T) {
	e := newEnv(t, 0, emulator.Options{})
	pool := pgtest.Connect(t)
	table := pgtest.NewSchema(t, pool) + ".people"
	pgtest.Exec(t, pool, fmt.Sprintf(`CREATE TABLE %s (id text PRIMARY KEY, first_name text, last_name text,
		email text, mobile text, score text, updated_at timestamptz NOT NULL)`, table))
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	put := func(id, first string) {
		t.Helper()
		at = at.Add(time.Second)
		pgtest.Exec(t, pool, fmt.Sprintf(`INSERT INTO %s VALUES ($1, $2, 'Last', NULL, NULL, '1', $3)
			ON CONFLICT (id) DO UPDATE SET first_name = excluded.first_name, updated_at = excluded.updated_at`, table), id, first, at)
	}
	for i := 1; i <= 5; i++ {
		put(fmt.Sprintf("p%d", i), fmt.Sprintf("First%d", i))
	}
	put("p100", "Ann")
	put(" p100", "Bob")
	put("\u00a0p200\t", "Cleo")
	put("p300", "Dora")

	spec := mapping.Spec{Fields: map[string]mapping.FieldSpec{
		"firstName": {From: "first_name"}, "lastName": {From: "last_name"}, "custom.score": {From: "score"}}}
	run := func() Summary {
		t.Helper()
		typ, _ := connector.Lookup(postgres.TypeName)
		settings := postgres.NewSettings()
		settings.DSN, settings.Table, settings.Changes = pgtest.URL(), table, postgres.ChangesPoll
		src, err := typ.Open(context.Background(), connector.Options{Name: "crm", Settings: settings, Log: quietLog()})
		if err != nil {
			t.Fatal(err)
		}
		defer src.Close()
		m, err := mapping.Compile(spec, "to-workspace", nil)
		if err != nil {
			t.Fatal(err)
		}
		m.SetCustomFieldTypes(e.ws)
		r, err := New(Options{Connector: "crm", Source: testSource, Type: typ, Reader: src, Mapper: m,
			Store: StoreOf(e.store), Workspace: e.ws, Workers: 4, Backoff: time.Millisecond, MaxAttempts: 6, Log: quietLog()})
		if err != nil {
			t.Fatal(err)
		}
		sum, err := r.Run(context.Background())
		if err != nil {
			t.Fatalf("run: %v (summary %v)", err, sum)
		}
		return sum
	}
	contacts := func() map[string]string { // externalId -> first name
		out := map[string]string{}
		for _, c := range e.emu.Contacts() {
			out[deref(c.ExternalID)] = deref(c.DefaultFields.FirstName)
		}
		return out
	}
	letter := func(ext string) string {
		t.Helper()
		dls, err := e.store.DeadLetters.List("crm")
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range dls {
			if d.Key == duplicateKey(ext) {
				return d.Reason
			}
		}
		return ""
	}

	// One pass: the twins are refused, the others sync.
	if sum := run(); sum.Created != 7 || sum.Failed != 2 {
		t.Fatalf("first pass %v, want 7 created (p1-p5, p200, p300) and 2 failed", sum)
	}
	got := contacts()
	if _, ok := got["p100"]; ok || got["p200"] != "Cleo" || got["p300"] != "Dora" || len(got) != 7 {
		t.Errorf("contacts %v: want none for p100, p200 (trimmed) and p300", got)
	}
	if r := letter("p100"); !strings.Contains(r, `records " p100" and "p100" give one externalId "p100"`) &&
		!strings.Contains(r, `records "p100" and " p100" give one externalId "p100"`) {
		t.Errorf("dead letter of p100: %q, want both records named", r)
	}

	// A twin of a linked row appears later: it is refused, and so is the
	// linked row when it changes, while the twin lives.
	put("p300 ", "Eve")
	if sum := run(); sum.Failed != 1 || sum.Updated != 0 || sum.Created != 0 {
		t.Errorf("pass with a twin of p300: %v, want it refused", sum)
	}
	put("p300", "Dora2")
	if sum := run(); sum.Failed < 1 || sum.Updated != 0 {
		t.Errorf("pass with p300 changed beside its twin: %v, want it refused", sum)
	}
	if got := contacts(); got["p300"] != "Dora" {
		t.Errorf("contact p300 holds %q, want Dora: nothing written while the twin lives", got["p300"])
	}
	if r := letter("p300"); !strings.Contains(r, `"p300"`) || !strings.Contains(r, `"p300 "`) {
		t.Errorf("dead letter of p300: %q, want both records named", r)
	}
	// The twin goes: the row syncs again and the dead letter is cleared.
	pgtest.Exec(t, pool, fmt.Sprintf(`DELETE FROM %s WHERE id = 'p300 '`, table))
	put("p300", "Dora3")
	if sum := run(); sum.Updated != 1 || sum.Failed != 0 {
		t.Errorf("pass after the twin went: %v, want p300 updated", sum)
	}
	if got := contacts(); got["p300"] != "Dora3" || letter("p300") != "" {
		t.Errorf("contact p300 %q, dead letter %q; want Dora3 and none", got["p300"], letter("p300"))
	}
}
