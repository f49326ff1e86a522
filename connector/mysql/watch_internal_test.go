package mysql

import (
	"testing"
	"time"
)

// lagClock's lag is the age of the oldest binlog end seen that the
// stream has not reached: not how long ends have kept moving.
func TestLagClock(t *testing.T) {
	t0 := time.Date(2026, 11, 27, 6, 0, 0, 0, time.UTC)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	pos := func(file string, off uint32) binlogPos { return binlogPos{File: file, Pos: off} }
	type look struct {
		ms         int
		end        binlogPos
		reached    binlogPos
		wantBehind time.Duration // read right after the look
	}
	tests := []struct {
		name  string
		looks []look
	}{
		{"caught up", []look{{0, pos("b.000001", 100), pos("b.000001", 100), 0}, {100, pos("b.000001", 100), pos("b.000001", 100), 0}}},
		{"before any pass", []look{{0, pos("b.000001", 100), binlogPos{}, 0}, {300, pos("b.000001", 100), binlogPos{}, 300 * time.Millisecond}}},
		{"steady changes each reached by the next look", []look{
			{0, pos("b.000001", 200), pos("b.000001", 100), 0},
			{100, pos("b.000001", 300), pos("b.000001", 200), 0},
			{200, pos("b.000001", 400), pos("b.000001", 300), 0},
			{300, pos("b.000001", 500), pos("b.000001", 400), 0},
		}},
		{"a slow pass: the oldest end unreached ages", []look{
			{0, pos("b.000001", 200), pos("b.000001", 100), 0},
			{100, pos("b.000001", 300), pos("b.000001", 100), 100 * time.Millisecond},
			{900, pos("b.000001", 300), pos("b.000001", 100), 900 * time.Millisecond},
			{1000, pos("b.000001", 400), pos("b.000001", 200), 900 * time.Millisecond}, // 200 reached, 300 seen at 100 ms
			{1100, pos("b.000001", 400), pos("b.000001", 400), 0},
		}},
		{"a new binlog file", []look{
			{0, pos("b.000001", 900), pos("b.000001", 100), 0},
			{100, pos("b.000002", 4), pos("b.000001", 900), 0},
			{200, pos("b.000002", 4), pos("b.000002", 4), 0},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var c lagClock
			for i, l := range tt.looks {
				c.observe(l.end, l.reached, at(l.ms))
				if got := c.behind(l.reached, at(l.ms)); got != l.wantBehind {
					t.Errorf("look %d at %d ms: behind %v, want %v", i, l.ms, got, l.wantBehind)
				}
			}
		})
	}
	t.Run("a full list keeps its oldest time", func(t *testing.T) {
		var c lagClock
		for i := range maxSeenEnds + 50 {
			c.observe(pos("b.000001", uint32(1000+i)), pos("b.000001", 1), at(i))
		}
		if len(c.seen) != maxSeenEnds {
			t.Fatalf("%d ends kept, want %d", len(c.seen), maxSeenEnds)
		}
		if got := c.behind(pos("b.000001", 1), at(2000)); got != 2000*time.Millisecond {
			t.Errorf("behind %v, want 2s (the oldest end's age)", got)
		}
		// Every end but the last reached: the newest kept took the
		// time of the one it replaced, never a later one.
		if got := c.behind(pos("b.000001", uint32(1000+maxSeenEnds+48)), at(2000)); got != time.Duration(2000-(maxSeenEnds-1))*time.Millisecond {
			t.Errorf("behind %v with only the last end unreached", got)
		}
	})
}

// The mode says how late the stream is only from a second on: "/ 0s
// behind" says nothing.
func TestNotifyModeLag(t *testing.T) {
	now := time.Now()
	reached := binlogPos{File: "b.000001", Pos: 100}
	tests := []struct {
		name  string
		since time.Duration // the oldest end not reached, seen this long ago
		want  string
	}{
		{"caught up", 0, "binlog, 2 kB behind"},
		{"a tenth of a second late", 100 * time.Millisecond, "binlog, 2 kB behind"},
		{"three seconds late", 3 * time.Second, "binlog, 2 kB / 3s behind"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := &binlogState{reached: reached, lagBytes: 2048, lagSeen: true}
			if tt.since > 0 {
				b.lag.observe(binlogPos{File: "b.000001", Pos: 200}, reached, now.Add(-tt.since))
			}
			if got := (&Source{binlog: b}).NotifyMode(); got != tt.want {
				t.Errorf("NotifyMode() = %q, want %q", got, tt.want)
			}
		})
	}
}
