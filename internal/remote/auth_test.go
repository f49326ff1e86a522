package remote

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
)

// sessionServer accepts only the newest session token; others get
// Salesforce's 401 INVALID_SESSION_ID.
type sessionServer struct {
	*httptest.Server
	mu      sync.Mutex
	current string
	hits    atomic.Int64
}

func newSessionServer(t *testing.T) *sessionServer {
	s := &sessionServer{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.hits.Add(1)
		s.mu.Lock()
		ok := r.Header.Get("Authorization") == "Bearer "+s.current
		s.mu.Unlock()
		if !ok {
			answer(401, `[{"message":"Session expired or invalid","errorCode":"INVALID_SESSION_ID"}]`)(w, r)
			return
		}
		answer(200, `{}`)(w, r)
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *sessionServer) expire(next string) {
	s.mu.Lock()
	s.current = next
	s.mu.Unlock()
}

// sessionJudge renews on 401 and fails otherwise.
func sessionJudge(a Answer) Verdict {
	err := fmt.Errorf("status %d", a.Status)
	if a.Status == http.StatusUnauthorized {
		return Verdict{Action: Renew, Err: err}
	}
	return Verdict{Action: Fail, Err: err}
}

func TestTokenRenewsOnceAndRepeats(t *testing.T) {
	srv := newSessionServer(t)
	var fetches atomic.Int64
	var serve func() (string, error)
	tok := &Token{Fetch: func(context.Context) (string, error) { fetches.Add(1); return serve() }}
	c := New(Options{Name: "sf", BaseURL: srv.URL, Auth: tok, Judge: sessionJudge, Log: quietLog()})
	get := func() error {
		_, err := c.Do(context.Background(), Request{Method: "GET", Path: "/", Idempotent: true}, nil)
		return err
	}

	srv.expire("t1")
	serve = func() (string, error) { return "t1", nil }
	if err := get(); err != nil || fetches.Load() != 1 || srv.hits.Load() != 1 {
		t.Fatalf("first call: %v, %d fetches, %d hits; want the token fetched once, one request", err, fetches.Load(), srv.hits.Load())
	}

	// The session expires: one renewal, the call repeated.
	srv.expire("t2")
	serve = func() (string, error) { return "t2", nil }
	if err := get(); err != nil || fetches.Load() != 2 || srv.hits.Load() != 3 {
		t.Fatalf("after expiry: %v, %d fetches, %d hits; want one renewal and a repeat", err, fetches.Load(), srv.hits.Load())
	}

	// A renewal that brings a token the service refuses again: no loop.
	srv.expire("t3")
	serve = func() (string, error) { return "stale", nil }
	if err := get(); err == nil || fetches.Load() != 3 || srv.hits.Load() != 5 {
		t.Fatalf("refused again: %v, %d fetches, %d hits; want the call to fail after one renewal", err, fetches.Load(), srv.hits.Load())
	}

	// A renewal that fails ends the call with its error.
	boom := errors.New("login refused")
	serve = func() (string, error) { return "", boom }
	if err := get(); !errors.Is(err, boom) || srv.hits.Load() != 6 {
		t.Fatalf("failed renewal: %v, %d hits; want the renewal's error after one request", err, srv.hits.Load())
	}
}

func TestConcurrentExpiryRenewsOnce(t *testing.T) {
	srv := newSessionServer(t)
	srv.expire("t1")
	var fetches atomic.Int64
	tok := &Token{Fetch: func(context.Context) (string, error) {
		return fmt.Sprintf("t%d", fetches.Add(1)), nil
	}}
	c := New(Options{Name: "sf", BaseURL: srv.URL, Auth: tok, Judge: sessionJudge, Log: quietLog()})
	get := func() error {
		_, err := c.Do(context.Background(), Request{Method: "GET", Path: "/", Idempotent: true}, nil)
		return err
	}
	if err := get(); err != nil {
		t.Fatal(err)
	}
	srv.expire("t2")
	var wg sync.WaitGroup
	errs := make([]error, 20)
	for i := range errs {
		wg.Go(func() { errs[i] = get() })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("caller %d: %v", i, err)
		}
	}
	if n := fetches.Load(); n != 2 {
		t.Errorf("%d fetches for 20 callers meeting one expiry, want 2 (first and one renewal)", n)
	}
}

func TestFixedHeaderIsNotRenewed(t *testing.T) {
	srv := newServer(t, answer(401, ""))
	c := New(Options{Name: "ws", BaseURL: srv.URL, Auth: Header("Authorization", "key"), Judge: sessionJudge, Log: quietLog()})
	_, err := c.Do(context.Background(), Request{Method: "GET", Path: "/", Idempotent: true}, nil)
	if !errors.Is(err, ErrNoRenew) || srv.hits.Load() != 1 {
		t.Errorf("err = %v after %d hits, want ErrNoRenew after one", err, srv.hits.Load())
	}
}
