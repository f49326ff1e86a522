package pipedrive

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/syncd-io/syncd/connector"
	"github.com/syncd-io/syncd/connector/pipedrive/pipedriveemu"
)

func openWith(t *testing.T, srv *pipedriveemu.Server, edit func(*Settings)) *Source {
	t.Helper()
	set := NewSettings()
	set.APIToken, set.BaseURL, set.PageSize, set.Lookback = connector.Secret(srv.Token()), srv.URL, 10, 0
	edit(set)
	src, err := Open(context.Background(), connector.Options{Name: "limits", Settings: set, Fields: []string{fieldName}, Log: quiet()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { src.Close() })
	return src
}

// TestBurstLimit reads 17 pages with two connectors on one token under
// the test server's burst limit of 20 requests per 2 s, the connectors
// configured for 40: the first answer's x-ratelimit-limit lowers their
// shared limiter, so the pass sees at most a handful of 429s and keeps
// to the allowed rate.
func TestBurstLimit(t *testing.T) {
	srv := pipedriveemu.NewServer(pipedriveemu.Options{BurstLimit: 20, Token: "burst-token"})
	t.Cleanup(srv.Close)
	for i := range 160 {
		srv.Add(pipedriveemu.Person{Name: fmt.Sprint("P", i)})
	}
	a := openWith(t, srv, func(s *Settings) { s.RateLimit = 40 })
	b := openWith(t, srv, func(s *Settings) { s.RateLimit = 40 })
	start := time.Now()
	done := make(chan error, 2)
	for _, src := range []*Source{a, b} {
		go func() {
			done <- src.Snapshot(context.Background(), func(context.Context, connector.Batch) error { return nil })
		}()
	}
	for range 2 {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	elapsed := time.Since(start)
	st := srv.Stats()
	calls := st.Requests[pipedriveemu.RouteListPersons]
	if n := st.RateLimited(); n > 3 {
		t.Errorf("%d answers were 429, want at most a handful", n)
	}
	// 20 per 2 s allows at most 10 + 20*(t/2s) calls in t: the calls
	// made show the pace kept to the limit, and it was not much slower.
	if okCalls := calls - st.RateLimited(); float64(okCalls) > 20+10*elapsed.Seconds() {
		t.Errorf("%d calls in %s: faster than 20 per 2 s", okCalls, elapsed)
	}
	if min := time.Duration(float64(calls-20)/10*float64(time.Second)) + time.Second; elapsed > 2*min+2*time.Second {
		t.Errorf("%d calls took %s, far slower than the allowed rate", calls, elapsed)
	}
	t.Logf("%d calls (%d answered 429) in %s", calls, st.RateLimited(), elapsed.Round(time.Millisecond))
	q := a.Quotas()
	if len(q) == 0 || q[0].Limit != 20 || q[0].Name != "burst requests (2 s window)" {
		t.Errorf("quotas %+v, want the burst window's limit of 20", q)
	}
}

// TestBurst429Waits: a 429 (as when the app's users spend the window)
// holds the call until x-ratelimit-reset (1 s), then it succeeds.
func TestBurst429Waits(t *testing.T) {
	srv := pipedriveemu.NewServer(pipedriveemu.Options{})
	t.Cleanup(srv.Close)
	srv.Add(pipedriveemu.Person{Name: "Ada"})
	srv.Inject(pipedriveemu.RouteListPersons, pipedriveemu.Fault{Status: http.StatusTooManyRequests})
	src := openWith(t, srv, func(*Settings) {})
	n := 0
	start := time.Now()
	if err := src.Snapshot(context.Background(), func(_ context.Context, b connector.Batch) error { n += len(b.Records); return nil }); err != nil || n != 1 {
		t.Fatalf("snapshot after a 429: %d records, %v", n, err)
	}
	if d := time.Since(start); d < time.Second {
		t.Errorf("the retry came after %s, before x-ratelimit-reset", d)
	}
}

// TestDailyBudget: when the company's daily token budget is spent
// Pipedrive answers 429 with requests left in the burst window; when
// syncd's own tokenBudget is spent no call is made. Both stop the read
// with connector.ErrBudgetSpent.
func TestDailyBudget(t *testing.T) {
	t.Run("company budget", func(t *testing.T) {
		srv := pipedriveemu.NewServer(pipedriveemu.Options{BurstLimit: 100, DailyTokens: 50, Token: "budget-1"})
		t.Cleanup(srv.Close)
		for i := range 40 {
			srv.Add(pipedriveemu.Person{Name: fmt.Sprint("P", i)})
		}
		src := openWith(t, srv, func(*Settings) {})
		err := src.Snapshot(context.Background(), func(context.Context, connector.Batch) error { return nil })
		if !errors.Is(err, connector.ErrBudgetSpent) || !errors.Is(err, ErrDailyBudget) {
			t.Fatalf("snapshot past the budget: %v, want ErrBudgetSpent", err)
		}
		if n := srv.Stats().RateLimited(); n != 1 {
			t.Errorf("%d 429 answers, want 1 (no retry)", n)
		}
	})
	t.Run("syncd's share", func(t *testing.T) {
		srv := pipedriveemu.NewServer(pipedriveemu.Options{Token: "budget-2"})
		t.Cleanup(srv.Close)
		for i := range 40 {
			srv.Add(pipedriveemu.Person{Name: fmt.Sprint("P", i)})
		}
		src := openWith(t, srv, func(s *Settings) { s.TokenBudget = 60 })
		err := src.Snapshot(context.Background(), func(context.Context, connector.Batch) error { return nil })
		if !errors.Is(err, connector.ErrBudgetSpent) {
			t.Fatalf("snapshot past tokenBudget: %v, want ErrBudgetSpent", err)
		}
		if n := srv.Stats().Requests[pipedriveemu.RouteListPersons]; n != 3 {
			t.Errorf("%d list calls, want 3 (60 tokens at 20 a list)", n)
		}
		q := src.Quotas()
		if len(q) == 0 || q[len(q)-1].Used != 60 || q[len(q)-1].Limit != 60 {
			t.Errorf("quotas %+v, want 60 of 60 tokens spent", q)
		}
	})
}

// TestCreateOutcomeUnknown: a create whose answer is lost is not sent
// again; its Err says the outcome is unknown.
func TestCreateOutcomeUnknown(t *testing.T) {
	srv := pipedriveemu.NewServer(pipedriveemu.Options{})
	t.Cleanup(srv.Close)
	srv.Inject(pipedriveemu.RouteAddPerson, pipedriveemu.Fault{Status: http.StatusBadGateway, AfterApply: true})
	src := openWith(t, srv, func(*Settings) {})
	res, err := src.Write(context.Background(), []connector.Change{{Op: connector.OpCreate, Fields: map[string]any{fieldName: "Ada"}}})
	if err != nil {
		t.Fatal(err)
	}
	if !errors.Is(res[0].Err, ErrOutcomeUnknown) {
		t.Errorf("create after a lost answer: %v, want ErrOutcomeUnknown", res[0].Err)
	}
	if n := srv.Stats().Requests[pipedriveemu.RouteAddPerson]; n != 1 || len(srv.Persons()) != 1 {
		t.Errorf("%d POSTs, %d persons; want the create sent once", n, len(srv.Persons()))
	}
}

func quiet() *logrus.Entry {
	l := logrus.New()
	l.SetOutput(io.Discard)
	return logrus.NewEntry(l)
}

// TestBurstShared: while someone else spends most of the token's window
// (the app's users count against it too), a pass reading 17 pages meets
// at most a handful of 429s and still finishes.
func TestBurstShared(t *testing.T) {
	srv := pipedriveemu.NewServer(pipedriveemu.Options{BurstLimit: 20, Token: "shared-token"})
	t.Cleanup(srv.Close)
	for i := range 160 {
		srv.Add(pipedriveemu.Person{Name: fmt.Sprint("P", i)})
	}
	src := openWith(t, srv, func(s *Settings) { s.RateLimit = 20 })
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() { // another tool: 6 requests a second on the same token
		defer close(done)
		tick := time.NewTicker(time.Second / 6)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
				req, _ := http.NewRequest(http.MethodGet, srv.URL+"/api/v2/personFields", nil)
				req.Header.Set("x-api-token", srv.Token())
				if res, err := http.DefaultClient.Do(req); err == nil {
					res.Body.Close()
				}
			}
		}
	}()
	err := src.Snapshot(context.Background(), func(context.Context, connector.Batch) error { return nil })
	close(stop)
	<-done
	if err != nil {
		t.Fatal(err)
	}
	st := srv.Stats()
	n := st.Responses[pipedriveemu.RouteListPersons][http.StatusTooManyRequests]
	if n > 5 {
		t.Errorf("the pass met %d 429s, want at most a handful", n)
	}
	t.Logf("%d list calls, %d answered 429; the other tool: %d calls, %d answered 429", st.Requests[pipedriveemu.RouteListPersons], n,
		st.Requests[pipedriveemu.RoutePersonFields], st.Responses[pipedriveemu.RoutePersonFields][http.StatusTooManyRequests])
}
