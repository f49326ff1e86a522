package remote

import (
	"context"
	"errors"
	"net/http"
	"sync"
)

// Auth sets a request's credentials, and renews them when the service
// says they expired (a Judge's Renew verdict).
type Auth interface {
	// Apply sets req's credentials (an Authorization header) and returns
	// a stamp naming them, for Renew. It may fetch the first credentials,
	// under req.Context().
	Apply(req *http.Request) (stamp uint64, err error)
	// Renew replaces the credentials named by stamp. When they were
	// already replaced (another caller renewed them meanwhile) it returns
	// nil at once, so that callers that meet an expiry together renew
	// once.
	Renew(ctx context.Context, stamp uint64) error
}

// Header returns the Auth of a fixed credential: the header name set to
// value on every request (e.g. "Authorization", "Bearer "+token). It
// cannot be renewed.
func Header(name, value string) Auth { return fixed{name, value} }

type fixed struct{ name, value string }

// String and GoString keep the credential out of logs and errors.
func (f fixed) String() string   { return "remote.Header(" + f.name + ": [redacted])" }
func (f fixed) GoString() string { return f.String() }

func (f fixed) Apply(req *http.Request) (uint64, error) {
	req.Header.Set(f.name, f.value)
	return 0, nil
}

func (fixed) Renew(context.Context, uint64) error { return ErrNoRenew }

// Token is an Auth holding a token that Fetch obtains (an OAuth access
// token, a session id): fetched on first use, fetched again on Renew. It
// is sent as "Authorization: Bearer <token>", or as Header: Scheme+" "+token
// when those are set (Scheme "" with Header set sends the bare token).
// Use it by pointer; the zero state is ready once Fetch is set.
type Token struct {
	// Fetch obtains a new token. It is never called concurrently.
	Fetch  func(ctx context.Context) (string, error)
	Header string
	Scheme string

	once  sync.Once
	sem   chan struct{} // held while fetching
	mu    sync.Mutex
	token string
	stamp uint64 // counts fetches; 0: none yet
}

// Apply sets the current token, fetching the first one if needed.
func (t *Token) Apply(req *http.Request) (uint64, error) {
	tok, stamp := t.current()
	if stamp == 0 {
		if err := t.Renew(req.Context(), 0); err != nil {
			return 0, err
		}
		tok, stamp = t.current()
	}
	name, scheme := t.Header, t.Scheme
	if name == "" {
		name, scheme = "Authorization", "Bearer"
	}
	if scheme != "" {
		tok = scheme + " " + tok
	}
	req.Header.Set(name, tok)
	return stamp, nil
}

// Renew fetches a new token unless the one named by stamp was already
// replaced.
func (t *Token) Renew(ctx context.Context, stamp uint64) error {
	if t.Fetch == nil {
		return errors.New("token: no fetch function")
	}
	t.once.Do(func() { t.sem = make(chan struct{}, 1) })
	select {
	case t.sem <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	defer func() { <-t.sem }()
	if _, cur := t.current(); cur != stamp {
		return nil
	}
	tok, err := t.Fetch(ctx)
	if err != nil {
		return err
	}
	if tok == "" {
		return errors.New("token: fetch returned an empty token")
	}
	t.mu.Lock()
	t.token, t.stamp = tok, t.stamp+1
	t.mu.Unlock()
	return nil
}

func (t *Token) current() (string, uint64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.token, t.stamp
}
