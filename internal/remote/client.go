package remote

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
	"sync/atomic"
	"time"

	"github.com/sirupsen/logrus"
	"github.com/syncd-io/syncd/internal/logfield"
	"golang.org/x/time/rate"
)

// Client runs API calls under Options' rules. It is safe for concurrent
// use.
type Client struct {
	opts  Options
	gate  *Gate
	calls atomic.Int64
}

// New returns a Client; zero options take their defaults.
func New(opts Options) *Client {
	if opts.HTTP == nil {
		opts.HTTP = http.DefaultClient
	}
	if opts.Backoff == nil {
		opts.Backoff = DefaultBackoff.Delay
	}
	if opts.Budget == (Budget{}) {
		opts.Budget = DefaultBudget
	}
	if opts.MaxRetryAfter == 0 {
		opts.MaxRetryAfter = DefaultMaxRetryAfter
	}
	if opts.MaxBody == 0 {
		opts.MaxBody = DefaultMaxBody
	}
	if opts.Sleep == nil {
		opts.Sleep = Sleep
	}
	if opts.Log == nil {
		opts.Log = logrus.NewEntry(logrus.StandardLogger())
	}
	if opts.RetryLevel == 0 {
		opts.RetryLevel = logrus.WarnLevel
	}
	c := &Client{opts: opts, gate: &Gate{}}
	if opts.Limiter != nil {
		c.gate = GateFor(opts.Limiter)
	}
	if c.opts.Judge == nil {
		c.opts.Judge = c.defaultJudge
	}
	return c
}

// Gate returns the pause gate the client waits on.
func (c *Client) Gate() *Gate { return c.gate }

// Calls returns the number of HTTP attempts made, retries included.
func (c *Client) Calls() int64 { return c.calls.Load() }

// result is the outcome of one attempt: an answer, or a transport
// failure (err set, ans nil).
type result struct {
	ans      *Answer
	duration time.Duration
	sent     bool // the request may have reached the service
	stamp    uint64
	err      error
	fatal    bool // err ends the call: the request could not be made
}

// tries counts a call's attempts and verdicts.
type tries struct {
	attempt, retries, waits int
	renewed                 bool
}

// step is what follows an attempt: the end of the call (done, with err)
// or a repeat after delay, renewing the credentials first with renew.
type step struct {
	done  bool
	err   error
	delay time.Duration
	renew bool
	wait  bool // the repeat follows a Wait verdict
}

// Do sends r and decodes a 2xx answer's JSON into out (unless out is nil
// or the status 204). It returns the last answer's status, 0 when none
// came. See the package comment for the rules of the loop.
func (c *Client) Do(ctx context.Context, r Request, out any) (int, error) {
	if r.Route == "" {
		r.Route = r.Method + " " + r.Path
	}
	var payload []byte
	if r.Body != nil {
		var err error
		if payload, err = json.Marshal(r.Body); err != nil {
			return 0, fmt.Errorf("encode %s body: %w", r.Route, err)
		}
	}
	u := c.opts.BaseURL + r.Path
	if len(r.Query) > 0 {
		u += "?" + r.Query.Encode()
	}
	log := c.opts.Log.WithFields(logrus.Fields{logfield.API: c.opts.Name, logfield.Route: r.Route})
	var t tries
	for {
		t.attempt++
		waitStart := time.Now()
		if err := c.waitTurn(ctx, r.Limiter); err != nil {
			return 0, fmt.Errorf("%s %s: wait for rate limit: %w", c.opts.Name, r.Route, err)
		}
		if err := beforeSend(ctx); err != nil {
			return 0, err
		}
		info := Info{Method: r.Method, Route: r.Route, Attempt: t.attempt, LimiterWait: time.Since(waitStart)}
		res := c.attempt(ctx, r, u, payload)
		c.calls.Add(1)
		if res.ans != nil && c.opts.Limiter != nil {
			c.gate.observe(c.opts.Limiter, c.opts.Name, res.ans.Status, c.opts.Log)
		}
		if res.ans != nil && c.opts.OnAnswer != nil {
			c.opts.OnAnswer(*res.ans)
		}
		s := c.next(ctx, r, &t, res, out)
		if c.opts.Observer != nil {
			info.Duration, info.Err = res.duration, s.err
			if res.ans != nil {
				info.Status = res.ans.Status
			}
			c.opts.Observer(info)
		}
		status := 0
		if res.ans != nil {
			status = res.ans.Status
		}
		if s.done {
			return status, s.err
		}
		if s.renew {
			if err := c.opts.Auth.Renew(ctx, res.stamp); err != nil {
				return status, fmt.Errorf("%s %s: renew credentials: %w (after %w)", c.opts.Name, r.Route, err, s.err)
			}
			continue
		}
		level := c.opts.RetryLevel
		if s.wait {
			level = logrus.DebugLevel
		}
		log.WithFields(logrus.Fields{logfield.Status: status, logfield.Attempt: t.attempt, logfield.Delay: s.delay.Round(time.Millisecond)}).
			Log(level, "api call failed, retrying")
		if err := c.opts.Sleep(ctx, s.delay); err != nil {
			return status, fmt.Errorf("%s %s: backoff: %w", c.opts.Name, r.Route, err)
		}
	}
}

// next judges an attempt. s.err is the attempt's error even when the
// call goes on, for the observer.
func (c *Client) next(ctx context.Context, r Request, t *tries, res result, out any) step {
	if res.ans != nil && res.ans.Status >= 200 && res.ans.Status <= 299 {
		return step{done: true, err: c.decode(r, res.ans, out)}
	}
	if res.fatal {
		return step{done: true, err: res.err}
	}
	unknown := func(err error) error { return fmt.Errorf("%w: %w", ErrOutcomeUnknown, err) }
	if ctx.Err() != nil { // the caller's context ended: stop
		err := fmt.Errorf("%s %s: %w", c.opts.Name, r.Route, ctx.Err())
		if !r.Idempotent && res.sent {
			err = unknown(err)
		}
		return step{done: true, err: err}
	}
	v := Verdict{Action: Retry, Err: res.err}
	if res.ans != nil {
		a := *res.ans
		a.Attempt, a.Retries, a.Waits = t.attempt, t.retries, t.waits
		v = c.opts.Judge(a)
	}
	var n int // the budget count of this repeat, for the backoff
	switch v.Action {
	case Retry:
		if !r.Idempotent && res.sent {
			return step{done: true, err: unknown(v.Err)}
		}
		t.retries++
		n = t.retries
	case Wait:
		if v.Pause > 0 {
			c.gate.PauseUntil(time.Now().Add(v.Pause))
		}
		if v.Drain && c.opts.Limiter != nil {
			Drain(c.opts.Limiter)
		}
		t.waits++
		n = t.waits
	case Renew:
		if c.opts.Auth == nil || t.renewed {
			return step{done: true, err: v.Err}
		}
		t.renewed = true
		return step{renew: true, err: v.Err}
	default:
		return step{done: true, err: v.Err}
	}
	b := c.opts.Budget
	if b.Shared {
		n = t.retries + t.waits
	}
	if (b.Shared && n > b.Retries) || (!b.Shared && (t.retries > b.Retries || t.waits > b.Waits)) {
		return step{done: true, err: v.Err}
	}
	delay := v.After
	if v.Action == Retry || v.Backoff {
		delay = max(delay, c.opts.Backoff(n))
	}
	return step{delay: delay, err: v.Err, wait: v.Action == Wait}
}

// decode reads a 2xx answer into out. An undecodable answer to a call
// that is not idempotent leaves its outcome unknown.
func (c *Client) decode(r Request, a *Answer, out any) error {
	if out == nil || a.Status == http.StatusNoContent || (c.opts.AllowEmpty && len(bytes.TrimSpace(a.Body)) == 0) {
		return nil
	}
	if err := json.Unmarshal(a.Body, out); err != nil {
		err = fmt.Errorf("%s %s: decode %d answer: %w", c.opts.Name, r.Route, a.Status, err)
		if !r.Idempotent {
			return fmt.Errorf("%w: %w", ErrOutcomeUnknown, err)
		}
		return err
	}
	return nil
}

// waitTurn waits for the pause gate, then for a token of each limiter.
// If the gate closed while this caller waited on a limiter (another
// caller got a 429), the caller waits for the gate and fresh tokens
// again: otherwise every caller queued on the limiter would fire at once
// when the gate opens, and be refused again.
func (c *Client) waitTurn(ctx context.Context, extra *rate.Limiter) error {
	for {
		if err := c.gate.Wait(ctx); err != nil {
			return err
		}
		for _, l := range []*rate.Limiter{c.opts.Limiter, extra} {
			if l == nil {
				continue
			}
			if err := l.Wait(ctx); err != nil {
				if _, ok := ctx.Deadline(); ok && !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) {
					// The limiter refuses at once a wait that would
					// outlast the deadline.
					return fmt.Errorf("%w: %v", context.DeadlineExceeded, err)
				}
				return err
			}
		}
		if time.Until(c.gate.PausedUntil()) <= 0 {
			return nil
		}
	}
}

// attempt sends one request and reads its answer.
func (c *Client) attempt(ctx context.Context, r Request, u string, payload []byte) result {
	if c.opts.AttemptTimeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.opts.AttemptTimeout)
		defer cancel()
	}
	var body io.Reader
	if payload != nil {
		body = bytes.NewReader(payload)
	}
	req, err := http.NewRequestWithContext(ctx, r.Method, u, body)
	if err != nil {
		return result{err: fmt.Errorf("%s %s: %w", c.opts.Name, r.Route, err), fatal: true}
	}
	for k, vs := range c.opts.Header {
		req.Header[k] = vs
	}
	req.Header.Set("Accept", "application/json")
	if payload != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	var res result
	if c.opts.Auth != nil {
		if res.stamp, err = c.opts.Auth.Apply(req); err != nil {
			return result{err: fmt.Errorf("%s %s: credentials: %w", c.opts.Name, r.Route, err), fatal: true}
		}
	}
	start := time.Now()
	resp, err := c.opts.HTTP.Do(req)
	res.duration = time.Since(start)
	if err != nil {
		res.sent, res.err = !DialFailed(err), c.transport(r.Route, StripURL(err))
		return res
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, c.opts.MaxBody))
	res.duration, res.sent = time.Since(start), true
	if err != nil {
		// The answer was cut short: for a POST the outcome is unknown
		// even if the status said success.
		res.err = c.transport(r.Route, fmt.Errorf("read %d answer: %w", resp.StatusCode, err))
		return res
	}
	res.ans = &Answer{Method: r.Method, Route: r.Route, Status: resp.StatusCode, Header: resp.Header, Body: data}
	return res
}

func (c *Client) transport(route string, err error) error {
	if c.opts.Transport != nil {
		return c.opts.Transport(route, err)
	}
	return &TransportError{API: c.opts.Name, Route: route, Err: err}
}

// DialFailed reports whether err happened while connecting, before any
// byte of the request was sent: even a create is safe to repeat.
func DialFailed(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "dial"
}

// StripURL drops the *url.Error wrapper, whose text repeats the method
// and full URL (with its query), keeping what went wrong.
func StripURL(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}
