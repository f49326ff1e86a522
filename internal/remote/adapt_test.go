package remote

import (
	"testing"
	"time"

	"github.com/sirupsen/logrus"
	"golang.org/x/time/rate"
)

// TestAdaptiveRate: a lone 429 leaves the rate alone, and so do 429s
// while the service accepts about the full rate (jitter); a run of them
// while it accepts much less lowers the rate to what it accepts (once per
// cooldown, never below the floor), and answers without 429 climb it back
// a hundredth of the ceiling per second.
func TestAdaptiveRate(t *testing.T) {
	log := logrus.NewEntry(logrus.New())
	for _, tc := range []struct {
		name    string
		answers []int
		want    rate.Limit
	}{
		{"lone 429", []int{200, 200, 429, 200, 200}, 50},
		{"two 429s are no run yet", []int{429, 429}, 50},
		{"a run of 429s with nothing accepted cuts to the floor", []int{429, 429, 429}, 1},
		{"a second cut waits for the cooldown", []int{429, 429, 429, 429, 429, 429}, 1},
		{"a run of 429s at full pace is jitter", append(repeat(200, 40), repeat(429, 6)...), 50},
		{"a tenth of 429s among successes is no run", append(repeat(200, 30), 429, 200, 200, 200, 200, 200, 200, 200, 200, 200, 429), 50},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := rate.NewLimiter(50, 10)
			g := &Gate{}
			g.configure(l, 50, 10)
			for _, s := range tc.answers {
				g.observe(l, "test", s, log)
			}
			if got := l.Limit(); got != tc.want {
				t.Errorf("limit = %v, want %v", got, tc.want)
			}
		})
	}
	t.Run("climbs back", func(t *testing.T) {
		l := rate.NewLimiter(50, 10)
		g := &Gate{}
		g.configure(l, 50, 10)
		for range 3 {
			g.observe(l, "test", 429, log)
		}
		cut := l.Limit()
		if cut >= 50 || l.Burst() > int(cut)+1 {
			t.Fatalf("after a run of 429s: limit %v burst %d", cut, l.Burst())
		}
		time.Sleep(1100 * time.Millisecond)
		g.observe(l, "test", 200, log)
		if got, want := l.Limit(), cut+0.25; got != want {
			t.Errorf("a second without 429: limit %v, want %v (a two-hundredth of the ceiling more)", got, want)
		}
		SetCeiling(l, 10, 5)
		if l.Limit() > 10 {
			t.Errorf("after SetCeiling(10): limit %v", l.Limit())
		}
	})
}

func repeat(status, n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = status
	}
	return out
}
