package workspace

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/syncd-io/syncd/internal/logfield"
	"github.com/syncd-io/syncd/internal/remote"
)

// request is one API call: a route template, the values of its path
// parameters, a query and a body.
type request struct {
	route string // "METHOD /path/{param}"
	args  []string
	query url.Values
	body  any // JSON-encoded when non-nil
}

// splitRoute returns the method and the path of a route template with its
// {param} segments replaced, in order, by the escaped args.
func splitRoute(route string, args []string) (method, path string, err error) {
	method, tmpl, ok := strings.Cut(route, " ")
	if !ok {
		return "", "", fmt.Errorf("bad route %q", route)
	}
	segs := strings.Split(tmpl, "/")
	i := 0
	for n, s := range segs {
		if !strings.HasPrefix(s, "{") {
			continue
		}
		if i >= len(args) {
			return "", "", fmt.Errorf("route %s: missing %s", route, s)
		}
		if args[i] == "" {
			return "", "", fmt.Errorf("%w: empty %s", ErrInvalidRequest, strings.Trim(s, "{}"))
		}
		segs[n] = url.PathEscape(args[i])
		i++
	}
	if i != len(args) {
		return "", "", fmt.Errorf("route %s: %d args for %d params", route, len(args), i)
	}
	return method, strings.Join(segs, "/"), nil
}

// do sends r and decodes a 2xx answer's JSON into out (when non-nil).
//
// Every attempt first waits for the shared pause gate and the rate limiter.
// A 429 is retried for every method: the service refused the request
// before applying it, so even a create is safe to send again. 5xx answers
// and transport failures are retried only for idempotent methods; for a
// POST they end the call with an error wrapping ErrOutcomeUnknown, because
// the service may have applied the write before failing or before its
// answer was lost. The one transport failure that is safe for a POST is a
// failed dial: nothing was sent. (The loop is remote.Client's; judge holds
// the workspace's own rules.)
func (c *Client) do(ctx context.Context, r request, out any) error {
	method, path, err := splitRoute(r.route, r.args)
	if err != nil {
		return err
	}
	_, err = c.rc.Do(ctx, remote.Request{Method: method, Path: path, Query: r.query, Route: r.route, Body: r.body,
		Idempotent: remote.IdempotentMethod(method)}, out)
	return err
}

// judge decides what follows a non-2xx answer. A 429 with Retry-After
// (capped at maxRetryAfter) pauses every caller of the key until then;
// without it every caller pauses briefly, the limiter's saved-up burst is
// drained, and this caller backs off. A 5xx is retried (when the method
// allows), after its Retry-After when longer than the backoff, by this
// caller only. Anything else is final.
func (c *Client) judge(a remote.Answer) remote.Verdict {
	err := decodeAPIError(a.Method, a.Route, a.Status, a.Body, c.apiKey)
	switch {
	case a.Status == http.StatusTooManyRequests:
		v := remote.Throttled(a.Header, c.maxRetryAfter, c.briefPause(), err)
		if !v.Backoff {
			c.log.WithFields(logrus.Fields{logfield.Route: a.Route, logfield.RetryAfter: v.Pause.Round(time.Millisecond)}).
				Info("workspace api rate limited: pausing every caller of the key")
		}
		return v
	case a.Status >= 500:
		after, _ := remote.RetryAfter(a.Header, c.maxRetryAfter)
		return remote.Verdict{Action: remote.Retry, After: after, Err: err}
	}
	return remote.Verdict{Action: remote.Fail, Err: err}
}

// briefPause is how long every caller of the key holds back after a 429
// without Retry-After: remote.BriefPause with the backoff base (250ms).
func (c *Client) briefPause() time.Duration {
	if c.gatePause > 0 {
		return c.gatePause
	}
	return remote.BriefPause(c.limiter, backoffBase)
}

// WithBeforeSend returns a context whose API calls run check just before
// each attempt is sent, after the rate limiter's wait: an error from
// check ends the call with that error, and nothing is sent (see
// remote.WithBeforeSend).
func WithBeforeSend(ctx context.Context, check func() error) context.Context {
	return remote.WithBeforeSend(ctx, check)
}
