package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"time"
)

func init() {
	registerCommand("healthcheck", "exit 0 when the daemon's admin API answers /healthz (for container health checks)", func(m *Main) Command { return &HealthcheckCommand{m: m} })
}

// HealthcheckCommand asks a daemon's /healthz (or /readyz) and exits 0
// when it answers 200: the image's HEALTHCHECK, which has no curl.
type HealthcheckCommand struct{ m *Main }

// Run parses the flags and checks.
func (c *HealthcheckCommand) Run(ctx context.Context, args []string) error {
	fs := c.m.newFlagSet("healthcheck", "healthcheck [--url http://127.0.0.1:8081/healthz] [--timeout 5s]")
	url := fs.String("url", "http://127.0.0.1:8081/healthz", "`URL` to ask; /readyz also checks the workspace and the webhook receiver")
	timeout := fs.Duration("timeout", 5*time.Second, "give up after this long")
	if err := fs.Parse(args); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, *url, nil)
	if err != nil {
		return fmt.Errorf("healthcheck: %w", err)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("healthcheck: %w", err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(res.Body, 4096))
	if res.StatusCode != http.StatusOK {
		return fmt.Errorf("healthcheck: %s answered %d: %s", *url, res.StatusCode, body)
	}
	fmt.Fprintf(c.m.Stdout, "%s", body)
	return nil
}
