package reconcile

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/syncd-io/syncd/workspace/emulator"
)

// TestMassRekeyGuard is issue 23's "the source's id format changes for
// every row" (r1 -> X1, same people): before, 200 duplicate contacts
// were made for 200 people. The pass must stop before writing, saying
// what it saw; allowed (--allow-mass-rekey), each new record takes over
// its person's contact by phone and e-mail, with no duplicate.
func TestMassRekeyGuard(t *testing.T) {
	for _, tc := range []struct {
		name  string
		match []string
		// resync allows the re-key through ResyncOptions (syncd resync
		// --allow-mass-rekey asking a running daemon) rather than the
		// reconciler's options (syncd run --allow-mass-rekey).
		resync bool
	}{
		{"no match setting: phone and e-mail", nil, false},
		{"match by e-mail", []string{MatchEmail}, false},
		{"allowed by the resync alone", nil, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, 200, emulator.Options{})
			e.match = tc.match
			if sum := e.run(); sum.Created != 200 {
				t.Fatalf("first sync: %v", sum)
			}
			for _, r := range e.rows[1:] {
				r[0] = "X" + r[0]
			}
			e.writeCSV()

			before := e.emu.Stats()
			sum, err := e.reconciler().Run(context.Background())
			if !errors.Is(err, ErrMassRekey) {
				t.Fatalf("re-keyed source: err %v (%v), want ErrMassRekey", err, sum)
			}
			for _, want := range []string{"create 200 contacts", "200 of the 200 linked records are no longer in the source", "--allow-mass-rekey"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not say %q", err, want)
				}
			}
			if posts, patches, deletes := e.writes(before); posts+patches+deletes != 0 {
				t.Errorf("the refused pass wrote %d/%d/%d, want nothing", posts, patches, deletes)
			}

			before = e.emu.Stats()
			r := e.reconciler()
			if tc.resync {
				sum, err = r.Resync(context.Background(), ResyncOptions{AllowMassRekey: true})
			} else {
				r.opts.AllowMassRekey = true
				sum, err = r.Run(context.Background())
			}
			if err != nil {
				t.Fatalf("allowed re-key: %v (%v)", err, sum)
			}
			// A resync also re-links every contact it finds in its listing
			// (and patches the new externalId), so it counts more relinks.
			if posts, _, deletes := e.writes(before); posts+deletes != 0 || sum.Relinked < 200 || (!tc.resync && sum.Relinked != 200) {
				t.Errorf("allowed re-key: %d POSTs %d DELETEs, %v; want every record to take over its contact", posts, deletes, sum)
			}
			e.assertNoDuplicates(200)
			e.assertConverged()
			if _, ok, _ := e.store.Links.Get("crm", "X7"); !ok {
				t.Error("no link for X7 after the re-key")
			}
			if _, ok, _ := e.store.Links.Get("crm", "7"); ok {
				t.Error("link 7 kept after the re-key")
			}
			if sum := e.run(); sum.Created+sum.Updated+sum.Deleted != 0 {
				t.Errorf("pass after the re-key: %v, want nothing to do", sum)
			}
		})
	}
}

// TestNewRecordsAreNoMassRekey: many new records while every linked one
// is still in the source is growth, not a re-key: created, no error.
func TestNewRecordsAreNoMassRekey(t *testing.T) {
	e := newEnv(t, 100, emulator.Options{})
	e.run()
	for i := 101; i <= 200; i++ {
		e.rows = append(e.rows, row(i, "v1"))
	}
	e.writeCSV()
	if sum := e.run(); sum.Created != 100 {
		t.Fatalf("100 new records: %v, want 100 created", sum)
	}
	e.assertConverged()
}
