package faults

import (
	"flag"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/syncd-io/syncd/test/emutest"
)

var (
	seeds     = flag.Int("seeds", 3, "seeds per fault rate")
	firstSeed = flag.Int64("seed", 1, "first seed")
	rateList  = flag.String("rates", "0.05,0.2,0.4", "comma-separated fault rates")
	rounds    = flag.Int("rounds", 6, "rounds of edits and forward passes under faults")
	rows      = flag.Int("rows", 80, "rows in the table at the start")
	logLevel  = flag.String("loglevel", "info", "level of syncd's log, written to a file when a run fails")
)

// TestFaultsConverge: for each rate and seed, an initial sync and rounds
// of edits on both sides, each followed by a forward pass, all under
// faults (the reverse direction works throughout, from webhooks); then
// the faults stop, the deliveries settle, and one more run (a forward
// pass, then catch-up and the inbox) must leave both sides agreeing with
// each other and with the model of every edit made.
func TestFaultsConverge(t *testing.T) {
	for _, rate := range rates(t) {
		for i := range *seeds {
			seed := *firstSeed + int64(i)
			t.Run(fmt.Sprintf("rate=%g/seed=%d", rate, seed), func(t *testing.T) {
				t.Parallel()
				w := newWorld(t, seed, *rows)
				w.emu.SetFaultRate(rate)
				w.watchLinks()
				w.pass("initial sync")
				for r := 1; r <= *rounds; r++ {
					w.edits(r)
					w.pass(fmt.Sprintf("round %d", r))
				}
				faults := w.emu.Stats().FaultsByKind
				w.emu.SetFaultRate(0)
				w.settle(time.Minute)
				w.rev.Stop()

				sums, err := w.d.RunOnce(w.ctx)
				if err != nil {
					t.Fatalf("the run after the faults failed: %v (%v)", err, sums)
				}
				rs, err := w.d.RunReverseOnce(w.ctx)
				if err != nil {
					t.Fatalf("the reverse run after the faults failed: %v (%+v)", err, rs)
				}
				w.m.logf("final run: %v; reverse %+v", sums, rs)

				rowsNow, contacts := w.table.Rows(), w.emu.Contacts()
				problems := append(w.m.check(rowsNow, contacts), agree(rowsNow, contacts)...)
				if len(problems) > 0 {
					for _, r := range w.m.recs {
						for _, p := range problems {
							if strings.Contains(p, r.email) {
								if r.contactID == "" {
									if c, ok := w.contactByEmail(r.email); ok {
										r.contactID = c.ID
									}
								}
								t.Log(w.explain(r))
								break
							}
						}
					}
					t.Fatalf("after the faults (%v) and one more run, %d problems:\n  %s", faults, len(problems), strings.Join(problems, "\n  "))
				}
				if rate >= 0.2 && faults["lost"] == 0 {
					t.Errorf("no lost answer was injected at rate %g (faults %v): the run proves less than it claims", rate, faults)
				}
				t.Logf("faults %v; %d records, %d live", faults, len(w.m.recs), len(w.m.live()))
			})
		}
	}
}

func rates(t *testing.T) []float64 {
	var out []float64
	for _, s := range strings.Split(*rateList, ",") {
		r, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
		if err != nil || r < 0 || r > 1 {
			t.Fatalf("-rates: %q is not a probability", s)
		}
		out = append(out, r)
	}
	return out
}

// edits makes a few random edits on both sides, never the same field of
// one record on both sides in one round (newest-wins would pick by
// clocks the model does not see), and no edit of a record deleted in the
// round.
func (w *world) edits(round int) {
	m := w.m
	touched := map[*record]map[string]string{} // record → column → side
	deleted := map[*record]bool{}
	free := func(r *record, column, side string) bool {
		if deleted[r] {
			return false
		}
		s, ok := touched[r][column]
		return !ok || s == side
	}
	mark := func(r *record, column, side string) {
		if touched[r] == nil {
			touched[r] = map[string]string{}
		}
		touched[r][column] = side
	}
	pick := func() *record {
		live := m.live()
		if len(live) == 0 {
			return nil
		}
		return live[m.rng.Intn(len(live))]
	}
	rowOf := func(r *record) bool {
		if r.rowID == 0 {
			if row, ok := w.table.ByEmail(r.email); ok {
				r.rowID = row.ID
			}
		}
		return r.rowID != 0
	}
	contactOf := func(r *record) bool {
		c, ok := w.contactByEmail(r.email)
		if ok {
			r.contactID = c.ID
		}
		return ok
	}
	for range 4 + m.rng.Intn(9) {
		switch k := m.rng.Intn(10); {
		case k < 3: // the table: a field changed
			r := pick()
			f := fields[m.rng.Intn(len(fields))]
			if r == nil || !free(r, f.column, "table") || !rowOf(r) {
				continue
			}
			v := m.next(f.column)
			w.table.Set(r.rowID, f.column, v)
			set(&r.want, f.column, v)
			mark(r, f.column, "table")
			m.logf("round %d: table row %d (%s) %s = %s", round, r.rowID, r.email, f.column, v)
		case k < 6: // the app: a field changed
			r := pick()
			f := fields[m.rng.Intn(len(fields))]
			if r == nil || !free(r, f.column, "app") || !contactOf(r) {
				continue
			}
			v := m.next(f.column)
			w.appSet(r.contactID, f.column, v)
			set(&r.want, f.column, v)
			mark(r, f.column, "app")
			m.logf("round %d: app contact %s (%s) %s = %s", round, r.contactID, r.email, f.target, v)
		case k == 6: // the table: a row added
			r := m.add("table", m.newValues())
			r.rowID = w.table.Insert(r.want)
			deleted[r] = false
			m.logf("round %d: table row %d added (%s)", round, r.rowID, r.email)
		case k == 7: // the app: a contact added
			r := m.add("app", m.newValues())
			r.contactID = w.appCreate(r.want).ID
			m.logf("round %d: app contact %s added (%s)", round, r.contactID, r.email)
		case k == 8: // the table: a row deleted (soft)
			r := pick()
			if r == nil || touched[r] != nil || deleted[r] || !rowOf(r) {
				continue
			}
			w.table.SoftDelete(r.rowID)
			r.live, deleted[r] = false, true
			m.logf("round %d: table row %d (%s) deleted", round, r.rowID, r.email)
		default: // the app: a contact deleted
			r := pick()
			if r == nil || touched[r] != nil || deleted[r] || !contactOf(r) || !rowOf(r) {
				continue
			}
			emutest.NewApp(w.t, w.url).Delete(r.contactID)
			r.live, deleted[r] = false, true
			m.logf("round %d: app contact %s (%s) deleted", round, r.contactID, r.email)
		}
	}
}
