package pipedrive

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"golang.org/x/time/rate"

	"github.com/syncd-io/syncd/internal/remote"
)

// client makes Pipedrive API calls through remote's request loop: only
// Pipedrive's own rules (rules.go) and its token accounting (limits.go)
// are here.
type client struct {
	api    *remote.Client
	http   *http.Client
	limits *limits
	// paced, when set (connector.Options.Limiter), paces every call too.
	paced *rate.Limiter
	// search paces the Search API's calls, which have a limit of their
	// own (10 per 2-second window on every plan), shared by the
	// connectors of the token.
	search *rate.Limiter
}

// call is one API request.
type call struct {
	method string
	path   string // "/api/v2/persons"
	query  url.Values
	body   any // JSON-encoded when non-nil
	// route names the call in errors and logs: "PATCH /api/v2/persons/{id}".
	route string
	// idempotent calls are retried after 5xx answers and transport
	// failures; others (creates) end with ErrOutcomeUnknown.
	idempotent bool
}

// do sends the call and decodes a 2xx answer into out (unless nil),
// after charging its token cost to the day's spend.
func (c *client) do(ctx context.Context, cl call, out any) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := c.limits.charge(costOf(cl)); err != nil {
		return fmt.Errorf("pipedrive %s: %w", cl.route, err)
	}
	if isSearch(cl.route) {
		if err := c.search.Wait(ctx); err != nil {
			return fmt.Errorf("pipedrive %s: %w", cl.route, err)
		}
	}
	_, err := c.api.Do(ctx, remote.Request{
		Method: cl.method, Path: cl.path, Query: cl.query, Route: cl.route, Body: cl.body,
		Idempotent: cl.idempotent, Limiter: c.paced,
	}, out)
	return err
}

// newClient builds the client of one connector: the limiter and the
// token accounting are shared by every connector of the token.
func newClient(baseURL, token string, rateLimit int, budget int64, paced *rate.Limiter, opts remote.Options) *client {
	r, b := bucket(rateLimit)
	limiter := remote.SharedLimiter(baseURL, token, "", r, b)
	l := limitsOf(limiter, rateLimit, budget)
	opts.Name, opts.BaseURL = "pipedrive", baseURL
	opts.Auth = remote.Header("x-api-token", token)
	opts.Limiter, opts.Judge, opts.OnAnswer = limiter, judge, l.observe
	if opts.HTTP == nil {
		opts.HTTP = &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}
	}
	opts.Budget = remote.Budget{Retries: maxAttempts, Waits: maxLimitAttempts}
	opts.AttemptTimeout = requestTimeout
	opts.AllowEmpty = true
	sr, sb := bucket(searchLimit)
	search := remote.SharedLimiter(baseURL, token, "search", sr, sb)
	return &client{api: remote.New(opts), http: opts.HTTP, limits: l, paced: paced, search: search}
}

// searchLimit is the Search API's documented limit per 2-second window,
// the same on every plan.
const searchLimit = 10

// isSearch reports whether a route is the Search API's
// ("GET /api/v2/organizations/search").
func isSearch(route string) bool { return strings.HasSuffix(route, "/search") }

// bucket is a token bucket that lets at most n-1 requests through in any
// 2-second window (one short of the limit, for requests that arrive
// closer together than they were sent): it holds a tenth of n and
// refills the rest over the window (n=20: 2 at once, then 8.5 per
// second).
func bucket(n int) (rate.Limit, int) {
	b := max(1, n/10)
	r := float64(n-1-b) / burstWindow.Seconds()
	if r <= 0 {
		r = 0.5
	}
	return rate.Limit(r), b
}
