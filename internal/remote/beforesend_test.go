package remote

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"golang.org/x/time/rate"
)

// TestBeforeSendRunsAfterTheLimiterAndCanStopTheCall: the check runs
// once the limiter's wait is over, before each attempt; an error from it
// ends the call with nothing sent.
func TestBeforeSendRunsAfterTheLimiterAndCanStopTheCall(t *testing.T) {
	stop := errors.New("changed meanwhile")
	for _, tc := range []struct {
		name     string
		failAt   int // the check fails from this call of it on (0: never)
		wantHits int64
		wantErr  error
	}{
		{name: "check passes", wantHits: 2},
		{name: "check stops the first attempt", failAt: 1, wantHits: 0, wantErr: stop},
		{name: "check stops the retry", failAt: 2, wantHits: 1, wantErr: stop},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := newServer(t, answer(http.StatusInternalServerError, `{}`), answer(http.StatusOK, `{}`))
			lim := rate.NewLimiter(rate.Every(50*time.Millisecond), 1)
			lim.Allow() // the next token comes in 50ms
			start := time.Now()
			var checks []time.Duration
			ctx := WithBeforeSend(context.Background(), func() error {
				checks = append(checks, time.Since(start))
				if tc.failAt > 0 && len(checks) >= tc.failAt {
					return stop
				}
				return nil
			})
			c := New(Options{Name: "test", BaseURL: srv.URL, Log: quietLog(), Limiter: lim, Sleep: func(context.Context, time.Duration) error { return nil }})
			_, err := c.Do(ctx, Request{Method: "DELETE", Path: "/", Idempotent: true}, nil)
			if !errors.Is(err, tc.wantErr) || (tc.wantErr == nil && err != nil) {
				t.Fatalf("err = %v, want %v", err, tc.wantErr)
			}
			if got := srv.hits.Load(); got != tc.wantHits {
				t.Errorf("%d requests sent, want %d", got, tc.wantHits)
			}
			if len(checks) == 0 || checks[0] < 40*time.Millisecond {
				t.Errorf("checks at %v: want the first after the limiter's wait", checks)
			}
		})
	}
}
