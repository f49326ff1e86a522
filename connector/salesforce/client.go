package salesforce

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/sirupsen/logrus"
	"golang.org/x/time/rate"

	"github.com/syncd-io/syncd/connector"
	"github.com/syncd-io/syncd/internal/logfield"
	"github.com/syncd-io/syncd/internal/remote"
)

// Salesforce's own rules for the request loop (internal/remote runs it).
const (
	lockWait     = time.Second // UNABLE_TO_LOCK_ROW: wait, then try again
	lockAttempts = 4           // rounds a locked record is tried in one Write
)

// client makes the connector's API calls through one remote.Client,
// built at the first call from the token answer's instance_url.
type client struct {
	auth    *authenticator
	version string // "v62.0"
	limiter *rate.Limiter
	http    *http.Client
	header  http.Header
	quota   *quota
	log     *logrus.Entry
	// sleep waits between attempts; tests replace it.
	sleep func(ctx context.Context, d time.Duration) error

	mu       sync.Mutex
	rc       *remote.Client
	instance string
}

// api returns the request loop, fetching the first token (and with it
// the instance URL) on first use.
func (c *client) api(ctx context.Context) (*remote.Client, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.rc != nil {
		return c.rc, nil
	}
	t, err := c.auth.fetch(ctx)
	if err != nil {
		return nil, err
	}
	first := t.AccessToken
	tok := &remote.Token{Fetch: func(ctx context.Context) (string, error) {
		if first != "" {
			f := first
			first = ""
			return f, nil
		}
		t, err := c.auth.fetch(ctx)
		if err != nil {
			return "", err
		}
		if t.InstanceURL != c.instance {
			c.log.WithField(logfield.Instance, t.InstanceURL).Warn("salesforce answered a new instance_url; it is used from the next start")
		}
		c.log.Info("salesforce session renewed")
		return t.AccessToken, nil
	}}
	c.instance = t.InstanceURL
	c.rc = remote.New(remote.Options{
		Name:       "salesforce",
		BaseURL:    t.InstanceURL,
		HTTP:       c.http,
		Auth:       tok,
		Header:     c.header,
		Limiter:    c.limiter,
		Judge:      judge,
		OnAnswer:   c.quota.observe,
		Budget:     remote.Budget{Retries: 5, Waits: 6},
		AllowEmpty: true,
		Sleep:      c.sleep,
		Log:        c.log,
	})
	return c.rc, nil
}

// call is one API request; path is below /services/data/vXX.X unless
// abs is set (a nextRecordsUrl).
type call struct {
	method string
	path   string
	abs    bool
	query  url.Values
	body   any
}

func (cl call) route() string {
	if cl.abs {
		return cl.method + " /query/{locator}"
	}
	return cl.method + " " + cl.path
}

// do sends the call, after checking the daily budget, and decodes a 2xx
// answer into out.
func (c *client) do(ctx context.Context, cl call, out any) error {
	if err := c.quota.check(); err != nil {
		return err
	}
	rc, err := c.api(ctx)
	if err != nil {
		return err
	}
	path := cl.path
	if !cl.abs {
		path = "/services/data/" + c.version + cl.path
	}
	_, err = rc.Do(ctx, remote.Request{Method: cl.method, Path: path, Query: cl.query, Body: cl.body,
		Route: cl.route(), Idempotent: cl.method != http.MethodPost}, out)
	return err
}

// judge applies Salesforce's rules to an error answer: an expired or
// revoked session is renewed once and the call repeated; the org's daily
// limit stops the pass; a record lock is waited out; 5xx (503 is
// Salesforce's "too busy") is retried; anything else fails.
func judge(a remote.Answer) remote.Verdict {
	e := parseError(a.Status, a.Route, a.Body)
	switch {
	case a.Status == http.StatusUnauthorized || e.Code == "INVALID_SESSION_ID":
		return remote.Verdict{Action: remote.Renew, Err: e}
	case e.Code == "REQUEST_LIMIT_EXCEEDED":
		return remote.Verdict{Action: remote.Fail, Err: e}
	case e.Code == "UNABLE_TO_LOCK_ROW":
		return remote.Verdict{Action: remote.Wait, After: lockWait, Backoff: true, Err: e}
	case a.Status >= 500:
		after, _ := remote.RetryAfter(a.Header, time.Minute)
		return remote.Verdict{Action: remote.Retry, After: after, Err: e}
	}
	return remote.Verdict{Action: remote.Fail, Err: e}
}

// budgetError is the error of a call not made because the budget is
// spent.
type budgetError struct {
	used, limit int64
	budget      float64
}

func (e *budgetError) Error() string {
	return fmt.Sprintf("salesforce: the org has used %d of its %d daily API calls, syncd's budget is %.0f%% (%d): the pass resumes at the next schedule",
		e.used, e.limit, e.budget*100, int64(e.budget*float64(e.limit)))
}

func (e *budgetError) Unwrap() error { return connector.ErrBudgetSpent }
