package connector

import (
	"context"
	"errors"
	"net/http"
	"net/url"
)

// ChangeNotifier is implemented by sources that can tell when they have
// something new to read, sooner than a schedule would: a CSV file
// replaced by an export job, a CRM's change webhook, a database's change
// stream. The daemon starts an incremental pass of the connector as soon
// as it is told (one pass for a burst of notifications), and the
// connector's schedule keeps running as a safety net.
//
// A notification is only a hint to read: it carries no data, so a forged
// or spurious one costs at most a read.
type ChangeNotifier interface {
	// NotifyChanges blocks until ctx is done and calls changed whenever
	// the source may have changes that Changes has not delivered yet. It
	// may call changed from any goroutine and as often as it likes: the
	// caller coalesces. It returns nil when ctx ends, and an error when
	// it can no longer notify (the schedule still runs).
	NotifyChanges(ctx context.Context, changed func()) error
	// NotifyMode describes how the source notifies, for status pages and
	// logs ("file watch", "webhooks"); empty when its settings enable no
	// notification (it then polls on its schedule only).
	NotifyMode() string
}

// WebhookSource is implemented by sources whose system pushes change
// webhooks (a CRM): the daemon mounts Webhook on its webhook listener at
// WebhookPath(name), and a verified delivery makes NotifyChanges call
// changed, so that an incremental pass starts at once (at most about
// once a second while deliveries keep coming). The delivery's payload is
// never read as data: the pass reads through the API as on schedule,
// reading also the records a verified delivery names (HubSpot) or up to
// the clock (Pipedrive), so a forged delivery could at most cause a read.
type WebhookSource interface {
	ChangeNotifier
	// Webhook returns the handler of the system's deliveries, nil when
	// the connector's settings do not enable webhooks. It verifies each
	// delivery as the system documents it and answers one that fails
	// 401, with no notification.
	Webhook() http.Handler
	// RegisterWebhook makes sure the system sends its change webhooks to
	// the connector's URL with the credentials of its settings (at most
	// one subscription, kept when it is already right; replace makes it
	// anew, for rotated credentials). It returns what it did, in words
	// for the operator. It returns an error wrapping ErrManualWebhook,
	// naming what to enter where, when the system's API cannot register
	// (HubSpot: the app's settings), and ErrWebhooksOff when Webhook is
	// nil.
	RegisterWebhook(ctx context.Context, replace bool) (string, error)
}

// Errors of RegisterWebhook.
var (
	// ErrManualWebhook: the system's webhook is set up by hand; the
	// error says what to enter.
	ErrManualWebhook = errors.New("the webhook is set up in the system's own settings")
	// ErrWebhooksOff: the connector's settings do not enable webhooks.
	ErrWebhooksOff = errors.New("webhooks are not enabled in the connector's settings")
)

// WebhookPath is the path of connector name's webhooks on the daemon's
// webhook listener.
func WebhookPath(name string) string { return "/webhooks/connectors/" + url.PathEscape(name) }

// TablePoller is a source that may read a SQL table by polling: a read of
// its changes is then one cheap query, which the daemon also runs between
// passes (reconcile.Observer).
type TablePoller interface {
	// PollsTable reports whether the source polls its table (false when
	// a change stream feeds it: the stream must not be read twice).
	PollsTable() bool
}
