package remote

import (
	"context"
	"net/http"
	"testing"
	"time"

	"golang.org/x/time/rate"
)

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2026, 3, 30, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name  string
		value string
		want  time.Time
		ok    bool
	}{
		{"absent", "", time.Time{}, false},
		{"zero seconds", "0", now, true},
		{"seconds", "5", now.Add(5 * time.Second), true},
		{"seconds with spaces", " 7 ", now.Add(7 * time.Second), true},
		{"http date", "Mon, 30 Mar 2026 12:00:30 GMT", now.Add(30 * time.Second), true},
		{"http date in the past", "Mon, 30 Mar 2026 11:00:00 GMT", now.Add(-time.Hour), true},
		{"rfc 850 date", "Monday, 30-Mar-26 12:01:00 GMT", now.Add(time.Minute), true},
		{"negative", "-1", time.Time{}, false},
		{"fraction", "1.5", time.Time{}, false},
		{"garbage", "soon", time.Time{}, false},
		{"overflow", "99999999999999999999", time.Time{}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := ParseRetryAfter(tc.value, now)
			if ok != tc.ok || !got.Equal(tc.want) {
				t.Errorf("ParseRetryAfter(%q) = %v, %v; want %v, %v", tc.value, got, ok, tc.want, tc.ok)
			}
		})
	}
}

func TestRetryAfterIsCapped(t *testing.T) {
	for _, tc := range []struct {
		name  string
		value string
		want  time.Duration
		ok    bool
	}{
		{"within the cap", "30", 30 * time.Second, true},
		{"capped", "86400", 10 * time.Minute, true},
		{"zero: none", "0", 0, false},
		{"past date: none", "Mon, 30 Mar 2020 11:00:00 GMT", 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, ok := RetryAfter(http.Header{"Retry-After": {tc.value}}, 10*time.Minute)
			if ok != tc.ok || d > tc.want || d < tc.want-time.Second {
				t.Errorf("RetryAfter(%q) = %v, %v; want %v, %v", tc.value, d, ok, tc.want, tc.ok)
			}
		})
	}
}

func TestGate(t *testing.T) {
	var g Gate
	start := time.Now()
	g.PauseUntil(start.Add(100 * time.Millisecond))
	g.PauseUntil(start.Add(50 * time.Millisecond)) // never shortens
	if got := g.PausedUntil(); !got.Equal(start.Add(100 * time.Millisecond)) {
		t.Fatalf("PausedUntil = %v", got.Sub(start))
	}
	time.AfterFunc(30*time.Millisecond, func() { g.PauseUntil(start.Add(200 * time.Millisecond)) }) // extended while waiting
	if err := g.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	if el := time.Since(start); el < 200*time.Millisecond {
		t.Errorf("Wait returned after %v, before the extended pause ended", el)
	}
	g.PauseUntil(time.Now().Add(time.Hour))
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if err := g.Wait(ctx); err != context.DeadlineExceeded {
		t.Errorf("Wait = %v, want the context's error", err)
	}
}

func TestDrainEmptiesTheBurst(t *testing.T) {
	l := rate.NewLimiter(1, 10)
	Drain(l)
	if tok := l.Tokens(); tok >= 1 {
		t.Errorf("tokens after Drain = %v, want < 1", tok)
	}
	Drain(l) // nothing left: must not go into debt
	if tok := l.Tokens(); tok < -0.01 {
		t.Errorf("tokens after a second Drain = %v, want no debt", tok)
	}
}

func TestBackoff(t *testing.T) {
	fixed := Backoff{Base: 500 * time.Millisecond, Max: 8 * time.Second}
	for n, want := range map[int]time.Duration{0: 500 * time.Millisecond, 1: 500 * time.Millisecond, 2: time.Second, 5: 8 * time.Second, 6: 8 * time.Second, 100: 8 * time.Second} {
		if got := fixed.Delay(n); got != want {
			t.Errorf("Delay(%d) = %v, want %v", n, got, want)
		}
	}
	jitter := Backoff{Base: 250 * time.Millisecond, Max: 10 * time.Second, Jitter: true}
	for _, tc := range []struct {
		retry int
		max   time.Duration
	}{{1, 250 * time.Millisecond}, {3, time.Second}, {7, 10 * time.Second}, {1000, 10 * time.Second}} {
		var top time.Duration
		for range 2000 {
			d := jitter.Delay(tc.retry)
			if d < 0 || d > tc.max {
				t.Fatalf("retry %d: delay %v outside [0, %v]", tc.retry, d, tc.max)
			}
			top = max(top, d)
		}
		if top < tc.max/2 {
			t.Errorf("retry %d: largest of 2000 delays %v, expected jitter up to %v", tc.retry, top, tc.max)
		}
	}
}

func TestSharedLimiterPerCredential(t *testing.T) {
	a := SharedLimiter("https://x", "tok-a", "", 9, 10)
	if SharedLimiter("https://x/", "tok-a", "", 9, 10) != a {
		t.Error("same token and URL: different limiters")
	}
	for _, other := range []*rate.Limiter{
		SharedLimiter("https://x", "tok-b", "", 9, 10),
		SharedLimiter("https://y", "tok-a", "", 9, 10),
		SharedLimiter("https://x", "tok-a", "search", 4, 1),
	} {
		if other == a {
			t.Error("another token, host or scope: same limiter")
		}
	}
	if SharedLimiter("https://x", "tok-a", "", 3, 2); a.Limit() != 3 || a.Burst() != 2 {
		t.Errorf("limit %v burst %d after a reload, want 3 and 2", a.Limit(), a.Burst())
	}
	if g := GateFor(a); g != GateFor(SharedLimiter("https://x", "tok-a", "", 3, 2)) || g == GateFor(rate.NewLimiter(1, 1)) {
		t.Error("GateFor does not give one gate per limiter")
	}
}
