package reconcile

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/syncd-io/syncd/policy"
	"github.com/syncd-io/syncd/workspace/emulator"
)

func TestInitialSyncThenNothingThenTenChanges(t *testing.T) {
	e := newEnv(t, 300, emulator.Options{})
	before := e.emu.Stats()
	sum := e.run()
	posts, patches, _ := e.writes(before)
	if sum.Created != 300 || posts != 300 || patches != 0 {
		t.Fatalf("initial sync: summary %v, %d POSTs, %d PATCHes; want 300 creates", sum, posts, patches)
	}
	// One listing of the (empty) source, then creates: no per-batch look-up.
	if sum.APICalls > 300+5 {
		t.Errorf("initial sync made %d API calls, want at most %d", sum.APICalls, 305)
	}
	e.assertConverged()

	before = e.emu.Stats()
	sum = e.run()
	posts, patches, deletes := e.writes(before)
	if posts+patches+deletes != 0 || sum.Unchanged != 300 {
		t.Fatalf("unchanged rerun: summary %v, writes %d/%d/%d; want none", sum, posts, patches, deletes)
	}
	if sum.APICalls != 0 {
		t.Errorf("unchanged rerun made %d API calls, want 0", sum.APICalls)
	}

	for i := 1; i <= 10; i++ {
		e.rows[i*7] = row(i*7, "v2")
	}
	e.writeCSV()
	before = e.emu.Stats()
	sum = e.run()
	posts, patches, deletes = e.writes(before)
	if patches != 10 || posts != 0 || deletes != 0 || sum.Updated != 10 {
		t.Fatalf("10 changed rows: summary %v, writes POST %d PATCH %d DELETE %d; want exactly 10 PATCHes", sum, posts, patches, deletes)
	}
	e.assertConverged()
}

func TestLostStateCreatesNoDuplicate(t *testing.T) {
	e := newEnv(t, 120, emulator.Options{})
	e.run()
	e.loseState()
	e.rows[5] = row(5, "changed-while-state-was-lost")
	e.writeCSV()
	before := e.emu.Stats()
	sum := e.run()
	posts, patches, _ := e.writes(before)
	if posts != 0 || patches != 1 {
		t.Fatalf("after losing state: %d POSTs and %d PATCHes (summary %v); want 0 and 1", posts, patches, sum)
	}
	if sum.Relinked != 120 {
		t.Errorf("relinked %d contacts, want 120", sum.Relinked)
	}
	// Write-back addresses records by their ID: the rebuilt links learn it.
	for _, ext := range []string{"1", "5", "120"} {
		if l, ok, err := e.store.Links.Get("crm", ext); err != nil || !ok || l.RecordID != ext {
			t.Errorf("link %s after relink: %+v (ok %v, err %v), want RecordID %s", ext, l, ok, err, ext)
		}
	}
	e.assertConverged()
}

func TestFaultsConvergeWithoutDuplicates(t *testing.T) {
	for _, seed := range []int64{1, 2, 3} {
		t.Run("seed"+string(rune('0'+seed)), func(t *testing.T) {
			e := newEnv(t, 150, emulator.Options{FaultRate: 0.2, Seed: seed})
			for i := 0; i < 6; i++ {
				if _, err := e.reconciler().Run(context.Background()); err != nil {
					t.Logf("run %d stopped early under faults: %v", i, err)
				}
				if i == 2 {
					for j := 1; j <= 20; j++ {
						e.rows[j*5] = row(j*5, "edited")
					}
					e.writeCSV()
				}
			}
			e.emu.SetFaultRate(0)
			sum := e.run()
			e.assertConverged()
			if sum.Failed != 0 {
				t.Errorf("last run without faults still failed %d records", sum.Failed)
			}
			if st := e.emu.Stats(); st.FaultsByKind["lost"] == 0 {
				t.Errorf("no lost answer was injected (faults %v): the test proves nothing", st.FaultsByKind)
			}
		})
	}
}

func TestSourceDeletesAndMassDeleteBreaker(t *testing.T) {
	e := newEnv(t, 100, emulator.Options{})
	e.policy = policy.DeleteRemove
	e.run()

	// 5% gone: under the 10% threshold, deleted.
	e.rows = append(e.rows[:1], e.rows[6:]...)
	e.writeCSV()
	before := e.emu.Stats()
	sum := e.run()
	if _, _, deletes := e.writes(before); deletes != 5 || sum.Deleted != 5 {
		t.Fatalf("5 rows gone: %d DELETEs, summary %v; want 5", deletes, sum)
	}
	e.assertConverged()

	// 50% gone: the breaker stops the run and deletes nothing.
	e.rows = e.rows[:48]
	e.writeCSV()
	before = e.emu.Stats()
	_, err := e.reconciler().Run(context.Background())
	if !errors.Is(err, ErrMassDelete) || !strings.Contains(err.Error(), "--allow-mass-delete") {
		t.Fatalf("mass delete: err = %v, want ErrMassDelete naming --allow-mass-delete", err)
	}
	if _, _, deletes := e.writes(before); deletes != 0 {
		t.Fatalf("breaker let %d DELETEs through", deletes)
	}

	e.allow = true
	e.run()
	e.assertConverged()
}

func TestRefusedRecordIsSetAsideOnce(t *testing.T) {
	e := newEnv(t, 20, emulator.Options{})
	e.rows[3][5] = "high" // the workspace's score field is a number: refused
	e.writeCSV()
	sum := e.run()
	if sum.Created != 19 || sum.Failed != 1 {
		t.Fatalf("summary %v, want 19 created and 1 failed", sum)
	}
	dls, err := e.store.DeadLetters.List("crm")
	if err != nil {
		t.Fatal(err)
	}
	if len(dls) != 1 || dls[0].Key != "3" || !strings.Contains(dls[0].Reason, "number") {
		t.Fatalf("dead letters %+v, want one for row 3 with the API's reason", dls)
	}

	// Unchanged, the refused row costs no call on the next run.
	before := e.emu.Stats()
	sum = e.run()
	if posts, patches, _ := e.writes(before); posts+patches != 0 || sum.Failed != 1 {
		t.Fatalf("rerun: %d POSTs %d PATCHes, summary %v; want no write and 1 failed", posts, patches, sum)
	}

	// Fixed at the source, it is created and its dead letter cleared.
	e.rows[3][5] = "9"
	e.writeCSV()
	sum = e.run()
	if sum.Created != 1 || sum.Failed != 0 {
		t.Fatalf("after the fix: summary %v, want 1 created", sum)
	}
	if n, _ := e.store.DeadLetters.Count("crm"); n != 0 {
		t.Fatalf("%d dead letters left after the fix", n)
	}
	e.assertConverged()
}

func TestUnmappableRecordIsReportedThenCleared(t *testing.T) {
	e := newEnv(t, 10, emulator.Options{})
	e.rows[4][3] = "ann at example" // not an e-mail address
	e.writeCSV()
	sum := e.run()
	if sum.Created != 9 || sum.Failed != 1 {
		t.Fatalf("summary %v, want 9 created and 1 failed", sum)
	}
	dls, _ := e.store.DeadLetters.List("crm")
	if len(dls) != 1 || dls[0].Operation != opMap || !strings.Contains(dls[0].Reason, "emails.work") {
		t.Fatalf("dead letters %+v, want one naming the field emails.work", dls)
	}
	e.rows[4] = row(4, "v1")
	e.writeCSV()
	if sum := e.run(); sum.Created != 1 {
		t.Fatalf("after the fix: %v, want 1 created", sum)
	}
	if n, _ := e.store.DeadLetters.Count("crm"); n != 0 {
		t.Fatalf("%d dead letters left after the record was fixed", n)
	}
}
