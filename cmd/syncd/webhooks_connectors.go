package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/sirupsen/logrus"

	"github.com/syncd-io/syncd/config"
	"github.com/syncd-io/syncd/connector"
	"github.com/syncd-io/syncd/internal/logfield"
)

// registerConnectors registers the change webhook of every connector
// whose settings enable webhooks (connector.WebhookSource), or prints
// what to set up by hand where the system's API cannot. replace makes
// each registered webhook anew (after a rotated webhooks.password).
func (c *WebhooksCommand) registerConnectors(ctx context.Context, cfg *config.Config, log *logrus.Logger, replace bool) error {
	var errs []error
	for _, cc := range cfg.Connectors {
		t, ok := connector.Lookup(cc.Type)
		if !ok || !t.Has(connector.CapWebhook) {
			continue
		}
		src, err := t.Open(ctx, connector.Options{Name: cc.Name, Settings: cc.Settings, Log: logrus.NewEntry(log).WithField(logfield.Connector, cc.Name)})
		if err != nil {
			errs = append(errs, fmt.Errorf("connector %s: open: %w", cc.Name, err))
			continue
		}
		ws, ok := src.(connector.WebhookSource)
		if !ok || ws.Webhook() == nil {
			_ = src.Close()
			continue
		}
		what, err := ws.RegisterWebhook(ctx, replace)
		_ = src.Close()
		switch {
		case errors.Is(err, connector.ErrManualWebhook):
			fmt.Fprintf(c.m.Stdout, "connector %s: set up by hand: %v\n", cc.Name, err)
		case err != nil:
			errs = append(errs, fmt.Errorf("connector %s: register webhook: %w", cc.Name, err))
		default:
			fmt.Fprintf(c.m.Stdout, "connector %s: %s\n", cc.Name, what)
		}
	}
	return errors.Join(errs...)
}

// hasConnectorWebhooks reports whether a connector's settings may enable
// change webhooks (its type takes them).
func hasConnectorWebhooks(cfg *config.Config) bool {
	for _, cc := range cfg.Connectors {
		if t, ok := connector.Lookup(cc.Type); ok && t.Has(connector.CapWebhook) {
			return true
		}
	}
	return false
}
