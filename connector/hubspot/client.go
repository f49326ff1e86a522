package hubspot

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
	"strconv"
	"time"

	"github.com/sirupsen/logrus"
	"golang.org/x/time/rate"
)

// Retry policy of the client.
const (
	maxAttempts      = 6  // for 5xx and transport failures of idempotent calls
	maxLimitAttempts = 10 // for 429 and 423 answers
	backoffBase      = 500 * time.Millisecond
	backoffMax       = 8 * time.Second
	lockedWait       = 2 * time.Second  // HubSpot: wait at least 2 s after a 423
	secondlyWait     = 1 * time.Second  // the SECONDLY (search) window
	tenSecondlyWait  = 10 * time.Second // the TEN_SECONDLY_ROLLING window
	maxRetryAfter    = 2 * time.Minute  // a longer Retry-After fails the call
	requestTimeout   = 60 * time.Second
)

// client makes HubSpot API calls: every attempt waits for the limiter
// (and search attempts for the search limiter too), answers are retried
// as the documentation asks, and errors are *Error values.
type client struct {
	baseURL       string
	token         Secret
	http          *http.Client
	limiter       *rate.Limiter
	searchLimiter *rate.Limiter
	log           *logrus.Entry
	// sleep waits d or until ctx is done; tests replace it.
	sleep func(ctx context.Context, d time.Duration) error
}

// call is one API request.
type call struct {
	method string
	path   string
	query  url.Values
	body   any // JSON-encoded when non-nil
	// search calls also wait for the search limiter.
	search bool
	// idempotent calls are retried after 5xx answers and transport
	// failures; others (creates) end with ErrOutcomeUnknown.
	idempotent bool
}

func (c call) route() string { return c.method + " " + c.path }

func sleepCtx(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// do sends the call and decodes a 2xx answer into out (unless nil or
// 204). It returns the answer's status.
func (c *client) do(ctx context.Context, cl call, out any) (int, error) {
	var payload []byte
	if cl.body != nil {
		var err error
		if payload, err = json.Marshal(cl.body); err != nil {
			return 0, fmt.Errorf("encode %s body: %w", cl.route(), err)
		}
	}
	u := c.baseURL + cl.path
	if len(cl.query) > 0 {
		u += "?" + cl.query.Encode()
	}
	log := c.log.WithField("route", cl.route())
	failures, limited := 0, 0
	for {
		if err := c.wait(ctx, cl.search); err != nil {
			return 0, fmt.Errorf("hubspot %s: wait for rate limit: %w", cl.route(), err)
		}
		status, header, body, sent, err := c.attempt(ctx, cl.method, u, payload)
		if err != nil {
			// Transport failure: no full answer came.
			if ctx.Err() != nil {
				err = fmt.Errorf("hubspot %s: %w", cl.route(), ctx.Err())
				if !cl.idempotent && sent {
					return 0, fmt.Errorf("%w: %w", ErrOutcomeUnknown, err)
				}
				return 0, err
			}
			err = fmt.Errorf("hubspot %s: %w", cl.route(), err)
			if !cl.idempotent && sent {
				return 0, fmt.Errorf("%w: %w", ErrOutcomeUnknown, err)
			}
			failures++
			if failures >= maxAttempts {
				return 0, err
			}
			d := backoff(failures)
			log.WithFields(logrus.Fields{"attempt": failures, "delay": d}).Warn("hubspot call failed, retrying")
			if err := c.sleep(ctx, d); err != nil {
				return 0, fmt.Errorf("hubspot %s: %w", cl.route(), err)
			}
			continue
		}
		if status >= 200 && status < 300 {
			if out == nil || status == http.StatusNoContent || len(bytes.TrimSpace(body)) == 0 {
				return status, nil
			}
			if err := json.Unmarshal(body, out); err != nil {
				err = fmt.Errorf("hubspot %s: decode %d answer: %w", cl.route(), status, err)
				if !cl.idempotent {
					return status, fmt.Errorf("%w: %w", ErrOutcomeUnknown, err)
				}
				return status, err
			}
			return status, nil
		}
		herr := parseError(status, cl.route(), header, body)
		var d time.Duration
		switch {
		case status == http.StatusTooManyRequests || status == http.StatusLocked || status == 477:
			// Refused before being applied: safe to repeat, even a create.
			if herr.PolicyName == "DAILY" {
				return status, fmt.Errorf("%w: %w", ErrDailyLimit, herr)
			}
			limited++
			if limited >= maxLimitAttempts {
				return status, herr
			}
			d = limitWait(herr, header, limited)
			if d > maxRetryAfter {
				return status, herr
			}
			log.WithFields(logrus.Fields{"status": status, "policy": herr.PolicyName, "delay": d}).Info("hubspot rate limited, waiting")
		case status >= 500:
			if !cl.idempotent {
				return status, fmt.Errorf("%w: %w", ErrOutcomeUnknown, herr)
			}
			failures++
			if failures >= maxAttempts {
				return status, herr
			}
			d = backoff(failures)
			log.WithFields(logrus.Fields{"status": status, "attempt": failures, "delay": d}).Warn("hubspot call failed, retrying")
		default:
			return status, herr
		}
		if err := c.sleep(ctx, d); err != nil {
			return status, fmt.Errorf("hubspot %s: %w", cl.route(), err)
		}
	}
}

// wait takes a token from the limiter, and for searches from the search
// limiter too.
func (c *client) wait(ctx context.Context, search bool) error {
	if err := c.limiter.Wait(ctx); err != nil {
		return err
	}
	if search {
		return c.searchLimiter.Wait(ctx)
	}
	return nil
}

// attempt sends one request. sent is false when the request surely did
// not reach HubSpot (the connection could not be opened).
func (c *client) attempt(ctx context.Context, method, u string, payload []byte) (status int, header http.Header, body []byte, sent bool, err error) {
	ctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	var rd io.Reader
	if payload != nil {
		rd = bytes.NewReader(payload)
	}
	req, err := http.NewRequestWithContext(ctx, method, u, rd)
	if err != nil {
		return 0, nil, nil, false, err
	}
	req.Header.Set("Authorization", "Bearer "+c.token.Reveal())
	req.Header.Set("Accept", "application/json")
	if payload != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := c.http.Do(req)
	if err != nil {
		var op *net.OpError
		return 0, nil, nil, !(errors.As(err, &op) && op.Op == "dial"), err
	}
	defer res.Body.Close()
	body, err = io.ReadAll(io.LimitReader(res.Body, 64<<20))
	if err != nil {
		return 0, nil, nil, true, fmt.Errorf("read answer: %w", err)
	}
	return res.StatusCode, res.Header, body, true, nil
}

// backoff is the capped exponential delay before retry n (from 1).
func backoff(n int) time.Duration {
	d := backoffBase << (n - 1)
	if d > backoffMax || d <= 0 {
		d = backoffMax
	}
	return d
}

// limitWait is the delay after the n-th 429 or 423 in a row: Retry-After
// when HubSpot sent one; at least 2 s after a 423; for a 429, the
// policy's window: one second for SECONDLY, growing from a tenth of the
// window to the whole of it for TEN_SECONDLY_ROLLING (the window's length
// comes from X-HubSpot-RateLimit-Interval-Milliseconds when sent).
func limitWait(e *Error, header http.Header, n int) time.Duration {
	if e.RetryAfter > 0 {
		if e.StatusCode == http.StatusLocked {
			return max(e.RetryAfter, lockedWait)
		}
		return e.RetryAfter
	}
	if e.StatusCode == http.StatusLocked {
		return lockedWait
	}
	if e.PolicyName == "SECONDLY" {
		return secondlyWait
	}
	window := tenSecondlyWait
	if ms, err := strconv.Atoi(header.Get("X-HubSpot-RateLimit-Interval-Milliseconds")); err == nil && ms > 0 {
		window = time.Duration(ms) * time.Millisecond
	}
	d := window / 10 << (n - 1)
	if d > window || d <= 0 {
		d = window
	}
	return d
}
