package daemon

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/syncd-io/syncd/admin"
	"github.com/syncd-io/syncd/internal/logfield"
)

// startAdmin is start-up step 1 (see Start): the admin API listens on
// admin.listen, when set. Its requests, and the passes its buttons start,
// end with ctx; when the daemon stops, the server answers the requests in
// flight, and Wait waits for those passes to finish their batch.
func (d *Daemon) startAdmin(ctx context.Context, r *Running) error {
	listen := d.cfg.Admin.Listen
	if listen == "" {
		return nil
	}
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return fmt.Errorf("admin.listen: %w", err)
	}
	srv := &http.Server{
		Handler: (&admin.Server{
			Daemon: d, Token: d.cfg.Admin.Token, Metrics: d.Metrics().Handler(), Context: ctx, Log: logrus.NewEntry(d.log),
		}).Handler(),
		BaseContext:       func(net.Listener) context.Context { return ctx },
		ReadHeaderTimeout: 10 * time.Second,
	}
	r.AdminAddr = ln.Addr().String()
	r.add(&service{
		name:  "admin server",
		serve: func(ctx context.Context) error { return serveHTTP(ctx, r.stopping, srv, ln) },
		close: func() { _ = ln.Close() },
	})
	d.log.WithField(logfield.Address, r.AdminAddr).Info("admin server listening")
	return nil
}
