package daemon

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/syncd-io/syncd/connector"
	"github.com/syncd-io/syncd/internal/logfield"
)

// A connector whose system pushes change webhooks (connector.WebhookSource)
// takes them on the workspace webhook receiver's listener, at
// connector.WebhookPath(name): a verified delivery makes its
// NotifyChanges poke the forward trigger (forward.go), so a pass starts
// at once and a burst makes one more pass, not one each.

// hookedConnector is a connector with its webhook handler.
type hookedConnector struct {
	c       *Connector
	src     connector.WebhookSource
	handler http.Handler
}

// hookedConnectors are the connectors whose settings enable webhooks.
func (d *Daemon) hookedConnectors() []hookedConnector {
	var out []hookedConnector
	for _, c := range d.connectors {
		ws, ok := c.Source.(connector.WebhookSource)
		if !ok {
			continue
		}
		if h := ws.Webhook(); h != nil {
			out = append(out, hookedConnector{c: c, src: ws, handler: h})
		}
	}
	return out
}

// mountConnectorHooks adds each hooked connector's handler to mux.
func (d *Daemon) mountConnectorHooks(mux *http.ServeMux, log *logrus.Entry) {
	for _, h := range d.hookedConnectors() {
		path := connector.WebhookPath(h.c.Name)
		if path == d.cfg.Webhooks.Path {
			log.WithField(logfield.Connector, h.c.Name).WithField(logfield.Path, path).Error("webhooks.path is the connector's webhook path; its change webhooks are not accepted")
			continue
		}
		mux.Handle(path, h.handler)
		log.WithField(logfield.Connector, h.c.Name).WithField(logfield.Path, path).Info("change webhooks of the connector accepted")
	}
}

// RegisterConnectorWebhooks registers the webhook of every hooked
// connector whose system's API allows it (replace makes each anew); for
// the others it reports what to set up by hand. It returns one line per
// connector, and the failures joined.
func (d *Daemon) RegisterConnectorWebhooks(ctx context.Context, replace bool) ([]string, error) {
	var lines []string
	var errs []error
	for _, h := range d.hookedConnectors() {
		what, err := h.src.RegisterWebhook(ctx, replace)
		switch {
		case errors.Is(err, connector.ErrManualWebhook):
			lines = append(lines, fmt.Sprintf("connector %s: set up by hand: %v", h.c.Name, err))
		case err != nil:
			errs = append(errs, fmt.Errorf("connector %s: register webhook: %w", h.c.Name, err))
		default:
			lines = append(lines, fmt.Sprintf("connector %s: %s", h.c.Name, what))
		}
	}
	return lines, errors.Join(errs...)
}

// registerConnectorHooks is start-up's registration, with
// webhooks.autoRegister: a failure is a warning, as the schedule still
// reads every change.
func (d *Daemon) registerConnectorHooks(ctx context.Context) {
	if !d.cfg.Webhooks.AutoRegister {
		return
	}
	for _, h := range d.hookedConnectors() {
		what, err := h.src.RegisterWebhook(ctx, false)
		switch {
		case errors.Is(err, connector.ErrManualWebhook):
			h.c.log.WithField(logfield.Setup, err.Error()).Info("change webhooks are set up in the system's settings")
		case err != nil:
			h.c.log.WithError(err).Warn("change webhook registration failed; the schedule still runs")
		default:
			h.c.log.WithField(logfield.Webhook, what).Info("change webhook ensured")
		}
	}
}

// startConnectorHooks listens on webhooks.listen for the connectors'
// webhooks alone, when the reverse direction runs no receiver (no
// connector reads workspace changes, or it was not started).
func (d *Daemon) startConnectorHooks(r *Running) error {
	if r.Addr != "" || len(d.hookedConnectors()) == 0 {
		return nil
	}
	log := logrus.NewEntry(d.log).WithField(logfield.Component, "webhooks")
	if d.cfg.Webhooks.Listen == "" {
		log.Warn("webhooks.listen is not set: the connectors' change webhooks cannot arrive; they poll on their schedule")
		return nil
	}
	mux := http.NewServeMux()
	d.mountConnectorHooks(mux, log)
	return d.serveWebhooks(r, mux, log)
}

// serveWebhooks listens on webhooks.listen with mux and adds the
// listener to r's services: it stops accepting when the daemon stops,
// and the requests in flight finish.
func (d *Daemon) serveWebhooks(r *Running, mux *http.ServeMux, log *logrus.Entry) error {
	ln, err := net.Listen("tcp", d.cfg.Webhooks.Listen)
	if err != nil {
		return fmt.Errorf("webhooks.listen: %w", err)
	}
	r.Addr = ln.Addr().String()
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: time.Minute}
	r.add(serveNow("webhook receiver", r.stopping, srv, ln))
	log.WithField(logfield.Address, r.Addr).Info("webhook receiver listening")
	return nil
}
