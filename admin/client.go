package admin

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"time"
)

// Client calls a running daemon's admin API.
type Client struct {
	// BaseURL is http://<admin.listen>.
	BaseURL string
	Token   string
	HTTP    *http.Client
}

// NewClient returns a client of the admin API listening on listen
// (host:port, as admin.listen) or at a URL.
func NewClient(listen, token string) *Client {
	base := listen
	if u, err := url.Parse(listen); err != nil || (u.Scheme != "http" && u.Scheme != "https") {
		base = "http://" + listen
	}
	return &Client{BaseURL: base, Token: token}
}

func (c *Client) httpClient() *http.Client {
	if c.HTTP != nil {
		return c.HTTP
	}
	return &http.Client{Timeout: 24 * time.Hour}
}

// Resync asks the daemon for a resync and waits for its answer.
func (c *Client) Resync(ctx context.Context, req ResyncRequest) (ResyncResponse, error) {
	var resp ResyncResponse
	err := c.do(ctx, http.MethodPost, "/resync", req, &resp, true)
	if err == nil && resp.Error != "" {
		err = fmt.Errorf("daemon: %s", resp.Error)
	}
	return resp, err
}

// Status returns the daemon's status.
func (c *Client) Status(ctx context.Context) (Status, error) {
	var st Status
	err := c.do(ctx, http.MethodGet, "/status", nil, &st, false)
	return st, err
}

// Ready returns the daemon's readiness; an unready daemon is not an error.
func (c *Client) Ready(ctx context.Context) (Readiness, error) {
	var r Readiness
	err := c.do(ctx, http.MethodGet, "/readyz", nil, &r, true)
	return r, err
}

// DeadLetters lists the connector's dead letters ("" for all).
func (c *Client) DeadLetters(ctx context.Context, connector string) ([]DeadLetter, error) {
	var out []DeadLetter
	err := c.do(ctx, http.MethodGet, "/deadletters?"+url.Values{"connector": {connector}}.Encode(), nil, &out, false)
	return out, err
}

// FieldWarnings lists the connector's field warnings ("" for all).
func (c *Client) FieldWarnings(ctx context.Context, connector string) ([]FieldWarning, error) {
	var out []FieldWarning
	err := c.do(ctx, http.MethodGet, "/fieldwarnings?"+url.Values{"connector": {connector}}.Encode(), nil, &out, false)
	return out, err
}

// RetryDeadLetter asks the daemon to retry the dead letter now.
func (c *Client) RetryDeadLetter(ctx context.Context, id uint64) (RetryResponse, error) {
	var resp RetryResponse
	err := c.do(ctx, http.MethodPost, "/deadletters/"+strconv.FormatUint(id, 10)+"/retry", nil, &resp, true)
	if err == nil && resp.Error != "" {
		err = fmt.Errorf("daemon: %s", resp.Error)
	}
	return resp, err
}

// DropDeadLetter asks the daemon to forget the dead letter.
func (c *Client) DropDeadLetter(ctx context.Context, id uint64) error {
	return c.do(ctx, http.MethodPost, "/deadletters/"+strconv.FormatUint(id, 10)+"/drop", nil, &struct{}{}, false)
}

// Conflicts lists up to limit of the connector's conflicts ("" for all;
// limit 0 for all), newest first.
func (c *Client) Conflicts(ctx context.Context, connector string, limit int) ([]Conflict, error) {
	var out []Conflict
	q := url.Values{"connector": {connector}, "limit": {strconv.Itoa(limit)}}
	err := c.do(ctx, http.MethodGet, "/conflicts?"+q.Encode(), nil, &out, false)
	return out, err
}

// Backup streams a consistent copy of the daemon's state file to w. A copy
// cut short is an error (the daemon closes the connection).
func (c *Client) Backup(ctx context.Context, w io.Writer) (int64, error) {
	res, err := c.send(ctx, http.MethodGet, "/state/backup", nil)
	if err != nil {
		return 0, err
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return 0, c.failure(res, http.MethodGet, "/state/backup")
	}
	n, err := io.Copy(w, res.Body)
	if err != nil {
		return n, fmt.Errorf("GET /state/backup: copy cut short after %d bytes: %w", n, err)
	}
	return n, nil
}

// do sends a JSON request and decodes a 2xx answer into out; any other
// answer is an error carrying the daemon's message.
//
// With anyStatus, the body of an answer with another status (but 401 and
// 403) is decoded too: the result types carry their own error.
func (c *Client) do(ctx context.Context, method, path string, in, out any, anyStatus bool) error {
	var body io.Reader
	if in != nil {
		var b bytes.Buffer
		if err := json.NewEncoder(&b).Encode(in); err != nil {
			return err
		}
		body = &b
	}
	res, err := c.send(ctx, method, path, body)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	// Resync, retry and readiness answer their result with an error
	// status when it failed; their bodies say what happened.
	refused := res.StatusCode == http.StatusUnauthorized || res.StatusCode == http.StatusForbidden
	if res.StatusCode/100 != 2 && (!anyStatus || refused) {
		return c.failure(res, method, path)
	}
	if err := json.NewDecoder(res.Body).Decode(out); err != nil {
		return fmt.Errorf("%s %s: status %d, unreadable answer: %w", method, path, res.StatusCode, err)
	}
	return nil
}

func (c *Client) send(ctx context.Context, method, path string, body io.Reader) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, method, c.BaseURL+path, body)
	if err != nil {
		return nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.Token != "" {
		req.Header.Set("Authorization", "Bearer "+c.Token)
	}
	res, err := c.httpClient().Do(req)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", method, pathOnly(path), err)
	}
	return res, nil
}

// ErrRefused is returned when the daemon refused the admin token.
var ErrRefused = errors.New("the daemon refused the admin token (check admin.token)")

// failure turns a non-2xx answer into an error with the daemon's reason.
func (c *Client) failure(res *http.Response, method, path string) error {
	if res.StatusCode == http.StatusUnauthorized {
		return fmt.Errorf("%s %s: %w", method, pathOnly(path), ErrRefused)
	}
	var e errorBody
	raw, _ := io.ReadAll(io.LimitReader(res.Body, 1<<16))
	if json.Unmarshal(raw, &e) != nil || e.Error == "" {
		e.Error = http.StatusText(res.StatusCode)
	}
	return &StatusError{Status: res.StatusCode, Message: e.Error}
}

// StatusError is an answer of the daemon other than success.
type StatusError struct {
	Status  int
	Message string
}

func (e *StatusError) Error() string {
	return fmt.Sprintf("daemon: %s (status %d)", e.Message, e.Status)
}

func pathOnly(p string) string {
	if u, err := url.Parse(p); err == nil {
		return u.Path
	}
	return p
}
