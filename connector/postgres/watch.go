package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pglogrepl"

	"github.com/syncd-io/syncd/connector"
	"github.com/syncd-io/syncd/connector/sqlkit"
)

// NotifyMode implements connector.ChangeNotifier: "logical, slot
// syncd_crm, 12 kB behind" (the WAL the slot holds, once seen), or empty
// when polling.
func (s *Source) NotifyMode() string {
	if s.logical == nil {
		return ""
	}
	mode := "logical, slot " + s.logical.slot
	if _, lag, ok := s.ReplicationLag(); ok {
		mode += ", " + sqlkit.ByteSize(lag) + " behind"
	}
	return mode
}

// notifyEvery is how often NotifyChanges looks at the server's WAL.
const notifyEvery = 100 * time.Millisecond

// NotifyChanges implements connector.ChangeNotifier. In logical mode it
// looks at the server's flushed WAL position every 100 ms and calls
// changed when it moved past what the last pass caught up with (so a
// write to another table of the database also starts a pass, which finds
// nothing and costs one short stream). In poll mode it never calls
// changed.
func (s *Source) NotifyChanges(ctx context.Context, changed func()) error {
	if s.logical == nil {
		<-ctx.Done()
		return nil
	}
	t := time.NewTicker(notifyEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
		var (
			flushed pglogrepl.LSN
			lag     *int64
		)
		if err := s.pool.QueryRow(ctx, lagQuery, s.logical.slot).Scan(&flushed, &lag); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("read wal position: %w", s.red.redact(err))
		}
		s.logical.mu.Lock()
		behind := flushed > s.logical.reached
		if lag != nil {
			s.logical.lag, s.logical.lagSeen = *lag, true
		}
		s.logical.mu.Unlock()
		if behind {
			changed()
		}
	}
}

var _ connector.ChangeNotifier = (*Source)(nil)

// lagQuery reads the server's flushed WAL position and how much WAL the
// slot $1 holds past its confirmed position (NULL without the slot).
const lagQuery = `SELECT pg_current_wal_flush_lsn(),
	(SELECT pg_wal_lsn_diff(pg_current_wal_flush_lsn(), confirmed_flush_lsn)::bigint
	 FROM pg_replication_slots WHERE slot_name = $1 AND database = current_database())`

// ReplicationLag returns the slot and the WAL it holds on the server, in
// bytes, as NotifyChanges last saw it (syncd_replication_lag_bytes); ok
// is false in poll mode and before it was seen.
func (s *Source) ReplicationLag() (slot string, bytes int64, ok bool) {
	if s.logical == nil {
		return "", 0, false
	}
	s.logical.mu.Lock()
	defer s.logical.mu.Unlock()
	return s.logical.slot, s.logical.lag, s.logical.lagSeen
}

var _ connector.TablePoller = (*Source)(nil)

// PollsTable reports whether the table is read by polling (no logical
// replication): a read of its changes is one cheap query, which the
// daemon also runs between passes to keep each value's time.
func (s *Source) PollsTable() bool { return s.logical == nil }
