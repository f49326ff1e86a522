package soak

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/syncd-io/syncd/state"
	"github.com/syncd-io/syncd/test/e2e"
)

// Summary is what a run measured, beside the check's Result.
type Summary struct {
	Options Options
	Result  Result
	Edits   []Edit
	Kills   int
	// Faults injected by kind; Calls are the API requests by route.
	Faults map[string]int
	Calls  map[string]int
	// Agreement is e2e.Agree's disagreements at the end.
	Agreement []string
	// Drain is the time from the edits' stop to both sides agreeing with
	// no write for Settle; LateWS and LateTable are syncd's writes in it.
	Drain             time.Duration
	LateWS, LateTable int
	// IdleWS and IdleTable are syncd's writes in the quiet window after.
	IdleWS, IdleTable int
	Journal           []state.Conflict
	DeadLetters       []state.DeadLetter
	Stopped           time.Time
}

// Failed reports whether the run broke a promise.
func (s Summary) Failed() bool {
	return s.Result.Failed() || len(s.Agreement) > 0 || s.IdleWS > 0 || s.IdleTable > 0
}

// Run runs one soak and returns its summary; the report is written to
// o.Out/report.txt.
func Run(t *testing.T, o Options) Summary {
	w := newWorld(t, o)
	t.Logf("soak %s: output in %s", o.Mode, o.Out)
	w.table.InsertN(o.Rows, func(i int) e2e.Values {
		v := fmt.Sprintf("I%d", i)
		return e2e.Values{First: v, Last: v, Company: v, Email: fmt.Sprintf("i%d@soak.example", i)}
	})
	edits, err := os.Create(filepath.Join(o.Out, "edits.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer edits.Close()
	w.log = NewLog(time.Now(), edits)
	budget := newRand(o.Seed + 4)
	for _, r := range w.table.Rows() {
		w.log.Add(Edit{At: w.log.Start, Side: Table, Op: OpCreate, Key: r.Email, Row: r.ID,
			Values: map[string]string{"firstName": r.First, "lastName": r.Last, "company": r.Company}})
		w.ents.add(r.Email, r.ID, "", minEdits+budget.Intn(maxEdits-minEdits+1))
	}
	if err := w.startSyncd(); err != nil {
		t.Fatal(err)
	}
	if problems := w.waitAgree(3 * time.Minute); len(problems) > 0 {
		t.Fatalf("the initial sync of %d rows did not converge:\n  %s", o.Rows, strings.Join(first(problems, 20), "\n  "))
	}
	w.ents.refresh(time.Now(), w.table.Rows(), w.emu.Contacts())

	// The load.
	w.emu.SetFaultRate(o.Faults)
	w.log.Event(fmt.Sprintf("edits start: %.1f/s, faults %.0f%%, SIGKILL every %v", o.Rate, 100*o.Faults, o.KillEvery))
	stop := make(chan struct{})
	errs := make(chan error, 8)
	var wg sync.WaitGroup
	var seq atomic.Int64
	run := func(f func()) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			f()
		}()
	}
	run(func() { w.resolver(stop, errs) })
	run(func() { w.driver(Table, o.Rate/2, o.Workers, &seq, stop, errs) })
	run(func() { w.driver(App, o.Rate/2, o.Workers, &seq, stop, errs) })
	if o.KillEvery > 0 {
		run(func() { w.killer(stop, errs) })
	}
	var loadErr error
	select {
	case <-time.After(o.Duration):
	case loadErr = <-errs:
	}
	close(stop)
	wg.Wait()
	if loadErr != nil {
		t.Fatal(loadErr)
	}
	select {
	case err := <-errs:
		t.Fatal(err)
	default:
	}

	// The drain: no more faults; both sides agree and no write comes for
	// Settle.
	s := Summary{Options: o, Stopped: time.Now()}
	w.log.Event("edits stopped; faults off")
	w.emu.SetFaultRate(0)
	ws0, tb0 := w.writes()
	ws, tb := ws0, tb0
	last := time.Now()
	deadline := time.Now().Add(o.Drain)
	for {
		time.Sleep(200 * time.Millisecond)
		nws, ntb := w.writes()
		if nws != ws || ntb != tb {
			ws, tb, last = nws, ntb, time.Now()
		}
		s.Agreement = e2e.Agree(w.table.Rows(), w.emu.Contacts())
		// syncd idle for GiveUp with the sides disagreeing will not
		// mend them: its scheduled passes came and went.
		if (len(s.Agreement) == 0 && time.Since(last) >= o.Settle) || time.Since(last) >= o.GiveUp || time.Now().After(deadline) {
			break
		}
	}
	s.Drain = last.Sub(s.Stopped)
	s.LateWS, s.LateTable = ws-ws0, tb-tb0
	w.log.Event(fmt.Sprintf("drained: %d workspace and %d table writes after the stop, the last at +%v", s.LateWS, s.LateTable, s.Drain.Round(time.Millisecond)))
	// The quiet window: any write now is a loop or a late echo.
	time.Sleep(o.Quiet)
	nws, ntb := w.writes()
	s.IdleWS, s.IdleTable = nws-ws, ntb-tb
	w.log.Event(fmt.Sprintf("quiet window of %v: %d workspace and %d table writes", o.Quiet, s.IdleWS, s.IdleTable))
	w.stopSyncd()

	st, err := state.Open(w.statePath(), state.Options{})
	if err != nil {
		t.Fatal(err)
	}
	s.Journal, err = st.Conflicts.List(e2e.Connector, 0)
	if err == nil {
		s.DeadLetters, err = st.DeadLetters.List(e2e.Connector)
	}
	st.Close()
	if err != nil {
		t.Fatal(err)
	}
	final := w.final()
	s.Edits = w.log.Edits()
	s.Result = Check(s.Edits, final, s.Journal, o.Race)
	s.Kills = w.kills
	st2 := w.emu.Stats()
	s.Faults, s.Calls = st2.FaultsByKind, st2.Requests
	report := w.report(s, final)
	if err := os.WriteFile(filepath.Join(o.Out, "report.txt"), []byte(report), 0o644); err != nil {
		t.Error(err)
	}
	t.Logf("soak %s report (%s):\n%s", o.Mode, filepath.Join(o.Out, "report.txt"), report)
	return s
}

// final reads both sides.
func (w *world) final() Final {
	f := Final{Rows: map[string][]e2e.Row{}, Contacts: map[string][]ContactValues{}, RowIDs: map[string][]int64{}, ContactIDs: map[string][]string{}}
	for _, r := range w.table.Rows() {
		if !r.Deleted {
			f.Rows[r.Email] = append(f.Rows[r.Email], r)
			f.RowIDs[r.Email] = append(f.RowIDs[r.Email], r.ID)
		}
	}
	for _, c := range w.emu.Contacts() {
		v := e2e.ContactValues(c)
		f.Contacts[v.Email] = append(f.Contacts[v.Email], ContactValues{ID: c.ID, Values: v})
		f.ContactIDs[v.Email] = append(f.ContactIDs[v.Email], c.ID)
	}
	return f
}

func first[T any](s []T, n int) []T {
	if len(s) > n {
		return s[:n]
	}
	return s
}
