package crash

import (
	"context"
	"fmt"
	"math/rand"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/syncd-io/syncd/workspace/emulator"
)

// TestActivitiesExactlyOnceThroughKill is issue 33's proof: 200 calls
// and 200 texts between linked people and the workspace, a tenth of
// the deliveries repeated, syncd SIGKILLed in the middle of them and 20
// calls made while it is down, end as exactly 420 activities in each of
// HubSpot, Salesforce, Pipedrive and a PostgreSQL activities table, each
// on its person's record and none twice; the summaries and transcripts
// made for some calls (some while syncd is down, some before their call
// is logged) are in their call's activity, not in another. syncd runs
// at level debug and prints no text's body and no transcript.
func TestActivitiesExactlyOnceThroughKill(t *testing.T) {
	const people, calls, texts, whileDown = 40, 200, 200, 20
	rng := rand.New(rand.NewSource(*seed))
	w := newActivityWorld(t, people, 0.1)
	ctx := context.Background()

	// Link everyone first: a call with a number no link knows is
	// skipped, by design. Salesforce's and Pipedrive's read windows end
	// at a whole second of the clock, exclusive: the first pass starts
	// in the next one.
	time.Sleep(1100 * time.Millisecond)
	runOK(t, 2*time.Minute, "run", "--once", "--config", w.cfg)
	if n := len(w.emu.Contacts()); n != people*len(activitySystems) {
		t.Fatalf("%d workspace contacts after the first run, want %d", n, people*len(activitySystems))
	}

	p := start(t, "run", "--config", w.cfg)
	waitListening(t, ctx, p, w.listen)
	var all []made
	summarized := 0
	// The calls and texts interleave, a few at a time; the kill lands
	// once half of them are made and some are already logged.
	killed := false
	var restarted time.Time
	var outputs []string // what each syncd printed
	for n := 0; n < calls+texts; n++ {
		i := rng.Intn(people)
		var m made
		if n%2 == 0 {
			m = w.call(t, ctx, i, n/2)
			if (n/2)%10 == 0 { // every tenth call is summarized, half of those transcribed
				w.summarize(t, ctx, &m, (n/2)%20 == 0)
				summarized++
			}
		} else {
			m = w.text(t, ctx, i, n/2)
		}
		all = append(all, m)
		if !killed && n >= (calls+texts)/2 {
			waitActivities(t, w, time.Minute, "activities logged before the kill", func(c map[string]int) bool {
				return c["hubspot"] >= 20 && c["salesforce"] >= 20 && c["pipedrive"] >= 20 && c["postgres"] >= 20
			})
			if !p.Kill() {
				t.Fatalf("syncd exited before its kill:\n%s", p.Out.String())
			}
			killed = true
			t.Logf("killed syncd after %d calls and texts; logged so far: %v", n+1, w.counts(t))
			// While it is down: more calls, and the summary of calls made
			// before the kill.
			for k := range whileDown {
				m := w.call(t, ctx, rng.Intn(people), calls+k)
				all = append(all, m)
			}
			for k := range all {
				if all[k].kind == "call" && len(all[k].want) == 0 && summarized < 30 && rng.Intn(4) == 0 {
					w.summarize(t, ctx, &all[k], true)
					summarized++
				}
			}
			outputs = append(outputs, p.Out.String())
			p = start(t, "run", "--config", w.cfg)
			restarted = time.Now()
			waitListening(t, ctx, p, w.listen)
		}
	}
	want := calls + texts + whileDown
	waitActivities(t, w, 3*time.Minute, fmt.Sprintf("%d activities in every system with every summary", want), func(c map[string]int) bool {
		for _, sys := range activitySystems {
			if c[sys] < want {
				return false
			}
		}
		return len(w.missing(t, all)) == 0
	})
	t.Logf("every activity logged %s after the restart", time.Since(restarted).Round(time.Millisecond))
	// Duplicated deliveries still in flight land, then syncd stops.
	time.Sleep(time.Second)
	p.Terminate(t, 30*time.Second)
	outputs = append(outputs, p.Out.String())
	// Privacy: no text's body and no transcript in what syncd printed
	// at level debug.
	for i, out := range outputs {
		t.Logf("syncd run %d printed %d lines", i+1, strings.Count(out, "\n"))
		if private := regexp.MustCompile(`text-\d+-body|transcript-of-`).FindString(out); private != "" {
			t.Errorf("syncd run %d printed a private value (%q):\n%s", i+1, private, out)
		}
	}

	for sys, problems := range w.check(t, all) {
		if len(problems) > 0 {
			if len(problems) > 15 {
				problems = append(problems[:15], fmt.Sprintf("… and %d more", len(problems)-15))
			}
			t.Errorf("%s:\n  %s", sys, strings.Join(problems, "\n  "))
		}
	}
	twice := w.deliveredTwice(t)
	if twice == 0 {
		t.Errorf("no event was delivered twice: the test does not test repeated deliveries")
	}
	t.Logf("%d calls (%d summarized) and %d texts; %d events delivered more than once", calls+whileDown, summarized, texts, twice)
}

// deliveredTwice counts the events the emulator delivered successfully
// more than once.
func (w *activityWorld) deliveredTwice(t *testing.T) int {
	t.Helper()
	n := 0
	for _, wh := range w.emu.Webhooks() {
		ok := map[string]int{}
		for _, d := range w.emu.Deliveries(wh.ID) {
			if d.Status == emulator.DeliveryDelivered {
				ok[d.EventID]++
			}
		}
		for _, c := range ok {
			if c > 1 {
				n++
			}
		}
	}
	return n
}

// waitActivities polls the systems until ok holds of their counts.
func waitActivities(t *testing.T, w *activityWorld, d time.Duration, what string, ok func(map[string]int) bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		c := w.counts(t)
		if ok(c) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("waited %s for %s: the systems hold %v", d, what, c)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// missing lists what all should have logged that some system lacks.
func (w *activityWorld) missing(t *testing.T, all []made) []string {
	t.Helper()
	var out []string
	for sys, probs := range w.check(t, all) {
		for _, p := range probs {
			out = append(out, sys+": "+p)
		}
	}
	return out
}

// check compares each system's activities with all: one per call or
// text, on its person's record, holding what its call's summary and
// transcript say; nothing else.
func (w *activityWorld) check(t *testing.T, all []made) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	for sys, got := range w.activities(t) {
		byKey := map[string]logged{}
		var problems []string
		for _, l := range got {
			if _, dup := byKey[l.key]; dup {
				problems = append(problems, fmt.Sprintf("%s logged twice", l.key))
			}
			byKey[l.key] = l
		}
		for _, m := range all {
			rec := w.records[sys][m.person]
			key := m.kind + ":" + m.id + ":" + rec
			l, ok := byKey[key]
			if !ok {
				problems = append(problems, fmt.Sprintf("%s %s of person %d not logged on %s", m.kind, m.id, m.person, rec))
				continue
			}
			delete(byKey, key)
			if l.record != rec {
				problems = append(problems, fmt.Sprintf("%s on record %s, want %s", key, l.record, rec))
			}
			for _, s := range m.want {
				if !strings.Contains(l.body, s) {
					problems = append(problems, fmt.Sprintf("%s does not hold %q", key, s))
				}
			}
		}
		var extra []string
		for k := range byKey {
			extra = append(extra, k)
		}
		sort.Strings(extra)
		for _, k := range extra {
			problems = append(problems, fmt.Sprintf("%s logged but never made", k))
		}
		out[sys] = problems
	}
	return out
}
