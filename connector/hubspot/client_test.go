package hubspot

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/time/rate"

	"github.com/syncd-io/syncd/connector"
	"github.com/syncd-io/syncd/connector/hubspot/hubspotemu"
)

func TestRetriesRateLimitsAndFailures(t *testing.T) {
	for _, tc := range []struct {
		name       string
		faults     []hubspotemu.Fault
		wantSleeps []time.Duration
	}{
		{
			name:       "429 with Retry-After waits what it says",
			faults:     []hubspotemu.Fault{{Status: 429, RetryAfter: "3"}, {Status: 429, RetryAfter: "1"}},
			wantSleeps: []time.Duration{3 * time.Second, time.Second},
		},
		{
			name:       "429 ten-secondly without Retry-After backs off within the window",
			faults:     []hubspotemu.Fault{{Status: 429, PolicyName: "TEN_SECONDLY_ROLLING"}, {Status: 429, PolicyName: "TEN_SECONDLY_ROLLING"}},
			wantSleeps: []time.Duration{time.Second, 2 * time.Second},
		},
		{
			name:       "429 secondly waits a second",
			faults:     []hubspotemu.Fault{{Status: 429, PolicyName: "SECONDLY"}},
			wantSleeps: []time.Duration{time.Second},
		},
		{
			name:       "423 waits at least 2 s",
			faults:     []hubspotemu.Fault{{Status: 423}, {Status: 423, RetryAfter: "1"}},
			wantSleeps: []time.Duration{2 * time.Second, 2 * time.Second},
		},
		{
			name:       "5xx backs off exponentially",
			faults:     []hubspotemu.Fault{{Status: 500}, {Status: 502}, {Status: 503}},
			wantSleeps: []time.Duration{500 * time.Millisecond, time.Second, 2 * time.Second},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, hubspotemu.Options{Seed: 10, RateLimit: 1000}, nil)
			ids := addAt(f.srv, base, make([]map[string]string, 3)...)
			f.srv.SetClock(base.Add(time.Minute))
			f.srv.Inject(hubspotemu.RouteSearch, tc.faults...)
			r := f.changes(t, "")
			assertOnce(t, r.ids(), ids)
			if got := f.recordedSleeps(); !slices.Equal(got, tc.wantSleeps) {
				t.Errorf("slept %v, want %v", got, tc.wantSleeps)
			}
			if got, want := f.srv.Stats().Requests[hubspotemu.RouteSearch], len(tc.faults)+1; got != want {
				t.Errorf("%d searches, want %d (one per fault, then success)", got, want)
			}
		})
	}
}

func TestDailyLimitStops(t *testing.T) {
	f := newFixture(t, hubspotemu.Options{Seed: 11}, nil)
	f.srv.Inject(hubspotemu.RouteSearch, hubspotemu.Fault{Status: 429, PolicyName: "DAILY"})
	err := f.src.Changes(context.Background(), "", func(context.Context, connector.Batch) error { return nil })
	if !errors.Is(err, ErrDailyLimit) || !errors.Is(err, ErrRateLimited) {
		t.Fatalf("changes: %v, want ErrDailyLimit", err)
	}
	if n := f.srv.Stats().Requests[hubspotemu.RouteSearch]; n != 1 || len(f.recordedSleeps()) != 0 {
		t.Errorf("%d searches and sleeps %v after a DAILY 429, want 1 and none", n, f.recordedSleeps())
	}
}

func TestLongRetryAfterFails(t *testing.T) {
	f := newFixture(t, hubspotemu.Options{Seed: 12}, nil)
	f.srv.Inject(hubspotemu.RouteList, hubspotemu.Fault{Status: 429, RetryAfter: "86400"})
	err := f.src.Snapshot(context.Background(), func(context.Context, connector.Batch) error { return nil })
	var he *Error
	if !errors.As(err, &he) || he.RetryAfter != 24*time.Hour {
		t.Fatalf("snapshot: %v, want the 429 error with its Retry-After", err)
	}
}

func TestServerErrorsGiveUp(t *testing.T) {
	f := newFixture(t, hubspotemu.Options{Seed: 13}, nil)
	for range maxAttempts + 2 {
		f.srv.Inject(hubspotemu.RouteList, hubspotemu.Fault{Status: 503})
	}
	err := f.src.Snapshot(context.Background(), func(context.Context, connector.Batch) error { return nil })
	var he *Error
	if !errors.As(err, &he) || he.StatusCode != 503 {
		t.Fatalf("snapshot: %v, want the 503", err)
	}
	if n := f.srv.Stats().Requests[hubspotemu.RouteList]; n != maxAttempts {
		t.Errorf("%d attempts, want %d", n, maxAttempts)
	}
}

func TestLimiterKeepsUnderServerLimit(t *testing.T) {
	// The server allows 20 calls per second; the connector's limiter
	// (Options.Limiter) lets through at most 2 + 18 in any second.
	srv := hubspotemu.NewServer(hubspotemu.Options{Seed: 14, RateLimit: 20, RateWindow: time.Second})
	defer srv.Close()
	addAt(srv, base, make([]map[string]string, 3000)...)
	set := NewSettings()
	set.Token, set.BaseURL = Secret(srv.Token()), srv.URL
	src, err := Open(context.Background(), connector.Options{Name: "crm", Settings: set, Limiter: rate.NewLimiter(18, 2)})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	src.c.sleep = func(context.Context, time.Duration) error { return errors.New("rate limited: must not happen") }
	start := time.Now()
	if err := src.Snapshot(context.Background(), func(context.Context, connector.Batch) error { return nil }); err != nil {
		t.Fatal(err)
	}
	if n := srv.Stats().Requests[hubspotemu.RouteList]; n != 30 {
		t.Errorf("%d list calls, want 30", n)
	}
	if d := time.Since(start); d < time.Second {
		t.Errorf("30 calls took %s: the limiter did not pace them", d)
	}
}

func TestDefaultSearchLimitStaysUnderHubSpots(t *testing.T) {
	// Default settings against HubSpot's documented 5 searches a second.
	srv := hubspotemu.NewServer(hubspotemu.Options{Seed: 15})
	defer srv.Close()
	ids := addAt(srv, base, make([]map[string]string, 7)...)
	srv.SetClock(base.Add(time.Minute))
	set := NewSettings()
	set.Token, set.BaseURL, set.PageSize = Secret(srv.Token()), srv.URL, 1
	src, err := Open(context.Background(), connector.Options{Name: "crm-search-limit", Settings: set})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	src.now = srv.Now
	var got []string
	err = src.Changes(context.Background(), "", func(_ context.Context, b connector.Batch) error {
		for _, r := range b.Records {
			got = append(got, r.ID)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	assertOnce(t, got, ids)
	if n := srv.Stats().RateLimited(hubspotemu.RouteSearch); n != 0 {
		t.Errorf("%d searches answered 429, want 0", n)
	}
}

// maxInWindow returns the most events a limiter allows in any window,
// driving it with a synthetic clock.
func maxInWindow(l *rate.Limiter, window time.Duration, span time.Duration) int {
	start := time.Unix(0, 0)
	var ok []time.Time
	for d := time.Duration(0); d < span; d += time.Millisecond {
		if now := start.Add(d); l.AllowN(now, 1) {
			ok = append(ok, now)
		}
	}
	best, j := 0, 0
	for i := range ok {
		for ok[i].Sub(ok[j]) >= window {
			j++
		}
		best = max(best, i-j+1)
	}
	return best
}

func TestLimiterShapes(t *testing.T) {
	for _, n := range []int{100, 190, 250, 10} {
		r, b := tenSecondly(n)
		if got := maxInWindow(rate.NewLimiter(r, b), 10*time.Second, 40*time.Second); got > n || got < n*8/10 {
			t.Errorf("rateLimit %d: %d calls in a 10 s window, want at most %d and close to it", n, got, n)
		}
	}
	r, b := perSecond(DefaultSearchRateLimit)
	if got := maxInWindow(rate.NewLimiter(r, b), time.Second, 5*time.Second); got > 5 {
		t.Errorf("default search limit lets %d searches through in a second, HubSpot allows 5", got)
	}
}

func TestSharedLimiterPerToken(t *testing.T) {
	a := sharedLimiter("https://x", "tok-a", false, 9, 10)
	if sharedLimiter("https://x/", "tok-a", false, 9, 10) != a {
		t.Error("same token and URL: different limiters")
	}
	if sharedLimiter("https://x", "tok-b", false, 9, 10) == a || sharedLimiter("https://x", "tok-a", true, 4, 1) == a {
		t.Error("other token or search: same limiter")
	}
}

func TestParseError(t *testing.T) {
	for _, tc := range []struct {
		name     string
		status   int
		body     string
		header   http.Header
		check    func(e *Error) error
		notFound bool
	}{
		{
			name:   "documented body",
			status: 400,
			body:   `{"status":"error","message":"Property values were not valid","correlationId":"c-1","category":"VALIDATION_ERROR","errors":[{"message":"bad","code":"INVALID_INTEGER","context":{"propertyName":["discount"]}}]}`,
			check: func(e *Error) error {
				if e.Category != "VALIDATION_ERROR" || e.CorrelationID != "c-1" || len(e.Errors) != 1 || e.Errors[0].Context["propertyName"][0] != "discount" {
					return fmt.Errorf("parsed %+v", e)
				}
				if !strings.Contains(e.Error(), "VALIDATION_ERROR: Property values were not valid (correlation id c-1)") {
					return fmt.Errorf("message %q", e.Error())
				}
				return nil
			},
		},
		{
			name:     "not found with ids",
			status:   207,
			body:     `{"status":"error","category":"OBJECT_NOT_FOUND","message":"gone","context":{"ids":["12",13]}}`,
			notFound: true,
			check: func(e *Error) error {
				if !slices.Equal(e.IDs(), []string{"12", "13"}) {
					return fmt.Errorf("ids %v", e.IDs())
				}
				return nil
			},
		},
		{
			name:   "conflict names the existing contact",
			status: 409,
			body:   `{"status":"error","message":"Contact already exists. Existing ID: 4501","category":"CONFLICT"}`,
			check: func(e *Error) error {
				if e.ExistingID() != "4501" {
					return fmt.Errorf("existing id %q", e.ExistingID())
				}
				return nil
			},
		},
		{
			name:   "rate limit with Retry-After",
			status: 429,
			body:   `{"status":"error","message":"slow down","errorType":"RATE_LIMIT","policyName":"SECONDLY"}`,
			header: http.Header{"Retry-After": {"2"}},
			check: func(e *Error) error {
				if e.PolicyName != "SECONDLY" || e.RetryAfter != 2*time.Second || !errors.Is(e, ErrRateLimited) || errors.Is(e, ErrDailyLimit) {
					return fmt.Errorf("parsed %+v", e)
				}
				return nil
			},
		},
		{
			name:   "not JSON",
			status: 502,
			body:   "<html>" + strings.Repeat("x", 500) + "</html>",
			check: func(e *Error) error {
				if len(e.Message) > 210 || !strings.HasPrefix(e.Message, "<html>") {
					return fmt.Errorf("message %q", e.Message)
				}
				return nil
			},
		},
		{name: "empty 404", status: 404, body: "", notFound: true, check: func(*Error) error { return nil }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := tc.header
			if h == nil {
				h = http.Header{}
			}
			e := parseError(tc.status, "POST /x", h, []byte(tc.body))
			if err := tc.check(e); err != nil {
				t.Error(err)
			}
			if got := errors.Is(e, connector.ErrNotFound); got != tc.notFound {
				t.Errorf("Is(ErrNotFound) = %v, want %v", got, tc.notFound)
			}
		})
	}
}

func TestTokenNeverShows(t *testing.T) {
	const token = "pat-na1-11111111-2222-3333-4444-555555555555"
	f := newFixture(t, hubspotemu.Options{Seed: 16, Token: token}, nil)
	f.srv.Inject(hubspotemu.RouteSearch, hubspotemu.Fault{Status: 500}, hubspotemu.Fault{Status: 429})
	addAt(f.srv, base, map[string]string{"email": "a@example.com"})
	f.srv.SetClock(base.Add(time.Minute))
	f.changes(t, "")

	var texts []string
	// A wrong token: the 401's error.
	bad := NewSettings()
	bad.Token, bad.BaseURL = Secret(token+"-wrong"), f.srv.URL
	src, err := Open(context.Background(), connector.Options{Name: "bad", Settings: bad, Log: f.src.log})
	if err != nil {
		t.Fatal(err)
	}
	_, err = src.Fields(context.Background())
	var he *Error
	if !errors.As(err, &he) || he.StatusCode != 401 {
		t.Fatalf("fields with a wrong token: %v, want a 401", err)
	}
	texts = append(texts, err.Error())
	// A failed write, a failed open, and the settings printed every way.
	_, err = f.src.Write(context.Background(), []connector.Change{{Op: connector.OpUpdate, ID: "1", Fields: map[string]any{"nope": "x"}}})
	if err != nil {
		texts = append(texts, err.Error())
	}
	bad.RateLimit = -1
	_, err = Open(context.Background(), connector.Options{Name: "bad", Settings: bad})
	texts = append(texts, err.Error())
	js, _ := json.Marshal(bad)
	texts = append(texts, fmt.Sprintf("%v %+v %#v %s %q", bad, bad, bad, bad.Token, bad.Token), string(js))
	f.mu.Lock()
	texts = append(texts, f.logs.String())
	f.mu.Unlock()
	for _, s := range texts {
		if strings.Contains(s, token) || strings.Contains(s, "pat-na1") {
			t.Errorf("token shows in %q", s)
		}
	}
	if !strings.Contains(f.logs.String(), "hubspot rate limited") {
		t.Errorf("logs lack the rate limit entry: the test saw no logs")
	}
}
