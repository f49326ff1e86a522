package workspace

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/sirupsen/logrus"
	"golang.org/x/time/rate"
)

// request is one API call: a route template, the values of its path
// parameters, a query and a body.
type request struct {
	route string // "METHOD /path/{param}"
	args  []string
	query url.Values
	body  any // JSON-encoded when non-nil
}

// idempotent reports whether repeating the request is harmless. POSTs
// (creates, rotate, retry of a delivery, test event) are not: each
// repetition may create, rotate or deliver again.
func idempotent(method string) bool {
	switch method {
	case http.MethodGet, http.MethodHead, http.MethodPut, http.MethodPatch, http.MethodDelete:
		return true
	}
	return false
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
// failed dial: nothing was sent.
func (c *Client) do(ctx context.Context, r request, out any) error {
	method, path, err := splitRoute(r.route, r.args)
	if err != nil {
		return err
	}
	var payload []byte
	if r.body != nil {
		if payload, err = json.Marshal(r.body); err != nil {
			return fmt.Errorf("encode %s body: %w", r.route, err)
		}
	}
	u := c.baseURL + path
	if len(r.query) > 0 {
		u += "?" + r.query.Encode()
	}
	idem := idempotent(method)
	log := c.log.WithFields(logrus.Fields{"method": method, "route": r.route})

	for attempt := 1; ; attempt++ {
		waitStart := time.Now()
		if err := c.waitTurn(ctx); err != nil {
			return fmt.Errorf("workspace api %s: wait for rate limit: %w", r.route, err)
		}
		info := RequestInfo{Method: method, Route: r.route, Attempt: attempt, LimiterWait: time.Since(waitStart)}
		res := c.attempt(ctx, method, u, r.route, payload)
		c.calls.Add(1)
		done, delay, err := c.judge(ctx, r.route, idem, attempt, res, out)
		if c.observer != nil {
			info.Status, info.Duration, info.Err = res.status, res.duration, res.err
			if done {
				info.Err = err
			}
			c.observer(info)
		}
		if done {
			return err
		}
		log.WithFields(logrus.Fields{"status": res.status, "attempt": attempt, "delay": delay.Round(time.Millisecond)}).
			Debug("workspace api call failed, retrying")
		if err := sleep(ctx, delay); err != nil {
			return fmt.Errorf("workspace api %s: backoff: %w", r.route, err)
		}
	}
}

// judge decides what follows an attempt: done with err (nil on success,
// after decoding the answer into out), or a retry after delay. On a 429 it
// closes the shared gate so that every caller of the key slows down.
func (c *Client) judge(ctx context.Context, route string, idem bool, attempt int, res result, out any) (done bool, delay time.Duration, err error) {
	if res.err == nil {
		if out == nil || res.status == http.StatusNoContent {
			return true, 0, nil
		}
		if err := json.Unmarshal(res.body, out); err != nil {
			err = fmt.Errorf("workspace api %s: decode %d answer: %w", route, res.status, err)
			if !idem {
				return true, 0, fmt.Errorf("%w: %w", ErrOutcomeUnknown, err)
			}
			return true, 0, err
		}
		return true, 0, nil
	}

	// The caller's context ended: stop. A POST that may have been sent has
	// an unknown outcome.
	if ctx.Err() != nil {
		err := fmt.Errorf("workspace api %s: %w", route, ctx.Err())
		if !idem && res.sent {
			return true, 0, fmt.Errorf("%w: %w", ErrOutcomeUnknown, err)
		}
		return true, 0, err
	}

	switch {
	case res.status == http.StatusTooManyRequests:
		// Refused before being applied: safe to retry for every method.
		now := time.Now()
		if until, ok := parseRetryAfter(res.header.Get("Retry-After"), now); ok && until.After(now) {
			if until.Sub(now) > c.maxRetryAfter {
				until = now.Add(c.maxRetryAfter)
			}
			c.gate.pauseUntil(until)
			c.log.WithFields(logrus.Fields{"route": route, "retry_after": until.Sub(now).Round(time.Millisecond)}).
				Info("workspace api rate limited: pausing every caller of the key")
		} else {
			c.gate.pauseUntil(now.Add(c.briefPause()))
			drain(c.limiter)
			delay = c.backoff.delay(attempt)
		}
	case res.status >= 500 || res.transport:
		if !idem && res.sent {
			return true, 0, fmt.Errorf("%w: %w", ErrOutcomeUnknown, res.err)
		}
		delay = c.backoff.delay(attempt)
		// A 503 may say when to come back; only this caller waits for it.
		if until, ok := parseRetryAfter(res.header.Get("Retry-After"), time.Now()); ok {
			delay = max(delay, min(time.Until(until), c.maxRetryAfter))
		}
	default:
		return true, 0, res.err
	}
	if attempt > c.maxRetries {
		return true, 0, res.err
	}
	return false, delay, nil
}

// briefPause is how long every caller of the key holds back after a 429
// without Retry-After. A 429 means the service's bucket is empty; holding
// back for P lets it bank P*limit requests, which then absorb P of timing
// jitter between our limiter and the service's bucket. P is the backoff
// base (250ms), or less when the burst refills sooner (burst/limit), and
// at least 20ms. The limiter's saved-up burst is drained at the same time,
// so callers resume at the steady rate; the caller that got the 429 also
// backs off itself.
func (c *Client) briefPause() time.Duration {
	if c.gatePause > 0 {
		return c.gatePause
	}
	d := backoffBase
	if l := float64(c.limiter.Limit()); l > 0 && c.limiter.Limit() != rate.Inf {
		d = min(d, time.Duration(float64(c.limiter.Burst())*float64(time.Second)/l))
	}
	return max(d, 20*time.Millisecond)
}

// waitTurn waits for the shared pause gate, then for a limiter token. If
// the gate closed while this caller waited on the limiter (another caller
// got a 429), the token is given up and the caller waits for the gate and
// a fresh token: otherwise every caller queued on the limiter would fire
// at once when the gate opens, and be refused again.
func (c *Client) waitTurn(ctx context.Context) error {
	for {
		if err := c.gate.wait(ctx); err != nil {
			return err
		}
		if err := c.limiter.Wait(ctx); err != nil {
			if _, ok := ctx.Deadline(); ok && !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) {
				// The limiter refuses at once a wait that would outlast
				// the deadline.
				return fmt.Errorf("%w: %v", context.DeadlineExceeded, err)
			}
			return err
		}
		if time.Until(c.gate.pausedUntil()) <= 0 {
			return nil
		}
	}
}

// result is the outcome of one HTTP attempt. err is an *APIError for a
// non-2xx answer and a *transportError when no full answer came.
type result struct {
	status    int
	header    http.Header
	body      []byte
	duration  time.Duration
	sent      bool // the request may have reached the service
	transport bool // no full answer came
	err       error
}

func (c *Client) attempt(ctx context.Context, method, u, route string, payload []byte) result {
	var body io.Reader
	if payload != nil {
		body = bytes.NewReader(payload)
	}
	req, err := http.NewRequestWithContext(ctx, method, u, body)
	if err != nil {
		return result{err: fmt.Errorf("workspace api %s: %w", route, err)}
	}
	req.Header.Set("Authorization", c.apiKey)
	req.Header.Set(c.versionHeader, c.version)
	req.Header.Set("User-Agent", c.userAgent)
	req.Header.Set("Accept", "application/json")
	if payload != nil {
		req.Header.Set("Content-Type", "application/json")
	}

	start := time.Now()
	resp, err := c.http.Do(req)
	if err != nil {
		return result{duration: time.Since(start), sent: !dialFailed(err), transport: true,
			err: &transportError{route: route, err: stripURL(err)}}
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxBodySize))
	res := result{status: resp.StatusCode, header: resp.Header, body: data, duration: time.Since(start), sent: true}
	if err != nil {
		// The answer was cut short: for a POST the outcome is unknown
		// even if the status said success.
		res.status, res.transport = 0, true
		res.err = &transportError{route: route, err: fmt.Errorf("read %d answer: %w", resp.StatusCode, err)}
		return res
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		res.err = decodeAPIError(method, route, resp.StatusCode, data, c.apiKey)
	}
	return res
}

// dialFailed reports whether err happened while connecting, before any
// byte of the request was sent.
func dialFailed(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "dial"
}

// stripURL drops the *url.Error wrapper, whose text repeats the method and
// full URL (with its query), keeping what went wrong.
func stripURL(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}
