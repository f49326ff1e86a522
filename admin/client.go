package admin

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"time"
)

// Client calls a running daemon's admin API.
type Client struct {
	// BaseURL is http://<admin.listen>.
	BaseURL string
	Token   string
	HTTP    *http.Client
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
	err := c.do(ctx, http.MethodPost, "/resync", req, &resp)
	if err == nil && resp.Error != "" {
		err = fmt.Errorf("daemon: %s", resp.Error)
	}
	return resp, err
}

func (c *Client) do(ctx context.Context, method, path string, in, out any) error {
	var body bytes.Buffer
	if in != nil {
		if err := json.NewEncoder(&body).Encode(in); err != nil {
			return err
		}
	}
	req, err := http.NewRequestWithContext(ctx, method, c.BaseURL+path, &body)
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	if c.Token != "" {
		req.Header.Set("Authorization", "Bearer "+c.Token)
	}
	res, err := c.httpClient().Do(req)
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, path, err)
	}
	defer res.Body.Close()
	if res.StatusCode == http.StatusUnauthorized {
		return fmt.Errorf("%s %s: the daemon refused the admin token (check admin.token)", method, path)
	}
	if err := json.NewDecoder(res.Body).Decode(out); err != nil {
		return fmt.Errorf("%s %s: status %d, unreadable answer: %w", method, path, res.StatusCode, err)
	}
	return nil
}
