package connector

import "context"

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
	// logs ("file watch", "webhooks").
	NotifyMode() string
}
