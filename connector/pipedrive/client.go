package pipedrive

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
	"time"

	"github.com/sirupsen/logrus"
	"golang.org/x/time/rate"

	"github.com/syncd-io/syncd/connector"
)

// Retry policy of the client.
const (
	maxAttempts      = 5  // for 5xx and transport failures of idempotent calls
	maxLimitAttempts = 10 // for burst 429s
	backoffBase      = 500 * time.Millisecond
	backoffMax       = 8 * time.Second
	requestTimeout   = 60 * time.Second
)

// client makes Pipedrive API calls. The loop is small on purpose: what is
// Pipedrive's own (which answers to retry and how long to wait, the
// limits its headers announce) is in rules.go.
type client struct {
	baseURL string
	token   connector.Secret
	http    *http.Client
	limits  *limits
	// paced, when set (connector.Options.Limiter), paces every call too.
	paced *rate.Limiter
	log   *logrus.Entry
	// sleep waits d or until ctx is done; tests replace it.
	sleep func(ctx context.Context, d time.Duration) error
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

// do sends the call and decodes a 2xx answer into out (unless nil).
func (c *client) do(ctx context.Context, cl call, out any) error {
	var payload []byte
	if cl.body != nil {
		var err error
		if payload, err = json.Marshal(cl.body); err != nil {
			return fmt.Errorf("encode %s body: %w", cl.route, err)
		}
	}
	u := c.baseURL + cl.path
	if len(cl.query) > 0 {
		u += "?" + cl.query.Encode()
	}
	var st retryState
	for {
		if err := c.limits.wait(ctx, costOf(cl)); err != nil {
			return fmt.Errorf("pipedrive %s: %w", cl.route, err)
		}
		if c.paced != nil {
			if err := c.paced.Wait(ctx); err != nil {
				return fmt.Errorf("pipedrive %s: %w", cl.route, err)
			}
		}
		status, header, body, sent, err := c.attempt(ctx, cl.method, u, payload)
		if err == nil {
			c.limits.observe(header, time.Now())
		}
		v := judge(cl, &st, status, header, body, sent, err, ctx.Err())
		if v.err != nil {
			return v.err
		}
		if v.done {
			return decode(cl, body, out)
		}
		c.log.WithFields(logrus.Fields{"route": cl.route, "status": status, "delay": v.wait}).Info(v.why)
		if v.pause {
			c.limits.pause(time.Now().Add(v.wait))
			continue
		}
		if err := c.sleep(ctx, v.wait); err != nil {
			return fmt.Errorf("pipedrive %s: %w", cl.route, err)
		}
	}
}

// decode reads a 2xx answer into out.
func decode(cl call, body []byte, out any) error {
	if out == nil || len(bytes.TrimSpace(body)) == 0 {
		return nil
	}
	if err := json.Unmarshal(body, out); err != nil {
		err = fmt.Errorf("pipedrive %s: decode answer: %w", cl.route, err)
		if !cl.idempotent {
			return fmt.Errorf("%w: %w", ErrOutcomeUnknown, err)
		}
		return err
	}
	return nil
}

// attempt sends one request. sent is false when the request surely did
// not reach Pipedrive (the connection could not be opened).
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
	req.Header.Set("x-api-token", c.token.Reveal())
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

// newLimiter is a token bucket that never lets more than n requests
// through in any window: it holds a quarter of n and refills the rest
// over the window (n=20 per 2 s: 5 at once, then 7.5 per second).
func newLimiter(n int, window time.Duration) *rate.Limiter {
	r, b := bucket(n, window)
	return rate.NewLimiter(r, b)
}

func bucket(n int, window time.Duration) (rate.Limit, int) {
	b := max(1, n/4)
	r := float64(n-b) / window.Seconds()
	if r <= 0 {
		r = 0.5
	}
	return rate.Limit(r), b
}
