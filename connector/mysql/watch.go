package mysql

import (
	"context"
	"fmt"
	"time"

	"github.com/syncd-io/syncd/connector"
	"github.com/syncd-io/syncd/connector/sqlkit"
)

var _ connector.ChangeNotifier = (*Source)(nil)

// notifyEvery is how often NotifyChanges looks at the server's binlog.
const notifyEvery = 100 * time.Millisecond

// NotifyMode implements connector.ChangeNotifier: "binlog, 12 kB / 3s
// behind" (the binlog written past the stored position, once seen, and
// how late the stream is when a second or more), or empty when polling.
func (s *Source) NotifyMode() string {
	if s.binlog == nil {
		return ""
	}
	mode := "binlog"
	if _, n, ok := s.ReplicationLag(); ok {
		mode += ", " + sqlkit.ByteSize(n)
		if d, _ := s.ReplicationDelay(); d.Round(time.Second) > 0 {
			mode += fmt.Sprintf(" / %s", d.Round(time.Second))
		}
		mode += " behind"
	}
	return mode
}

// NotifyChanges implements connector.ChangeNotifier. In binlog mode it
// reads the end of the server's binlog every 100 ms and calls changed
// when it moved past what the last pass caught up with (a write to
// another table also starts a pass, which skips its rows undecoded). In
// poll mode it never calls changed.
func (s *Source) NotifyChanges(ctx context.Context, changed func()) error {
	b := s.binlog
	if b == nil {
		<-ctx.Done()
		return nil
	}
	t := time.NewTicker(notifyEvery)
	defer t.Stop()
	var lastLag time.Time
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
		file, off, err := masterStatus(ctx, s.db)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("read binlog position: %w", s.red.Redact(err))
		}
		end := binlogPos{File: file, Pos: off}
		b.mu.Lock()
		reached := b.reached
		behind := reached.File == "" || !reached.atOrPast(end)
		b.lag.observe(end, reached, time.Now())
		if !behind {
			b.lagBytes, b.lagSeen = 0, true
		}
		b.mu.Unlock()
		if behind {
			changed()
			if time.Since(lastLag) >= time.Second && reached.File != "" {
				// The bytes behind need the files' sizes: once a second.
				lastLag = time.Now()
				if files, err := binlogFiles(ctx, s.db); err == nil {
					b.mu.Lock()
					b.lagBytes, b.lagSeen = binlogBehind(files, reached, end), true
					b.mu.Unlock()
				}
			}
		}
	}
}

// ReplicationLag returns "binlog" and how many bytes of binlog the server
// wrote past what syncd last caught up with, as NotifyChanges last saw
// it (syncd_replication_lag_bytes); ok is false in poll mode and before
// it was seen.
func (s *Source) ReplicationLag() (slot string, bytes int64, ok bool) {
	if s.binlog == nil {
		return "", 0, false
	}
	s.binlog.mu.Lock()
	defer s.binlog.mu.Unlock()
	return "binlog", s.binlog.lagBytes, s.binlog.lagSeen
}

// ReplicationDelay returns how late the stream is: how long ago
// NotifyChanges first saw the oldest binlog end that no pass has reached
// yet, that is about the age of the oldest change not yet applied (0
// when caught up; syncd_replication_lag_seconds). Under a steady stream
// of changes syncd keeps up with, it stays about the time a change takes
// to arrive. ok is false in poll mode.
func (s *Source) ReplicationDelay() (time.Duration, bool) {
	if s.binlog == nil {
		return 0, false
	}
	s.binlog.mu.Lock()
	defer s.binlog.mu.Unlock()
	return s.binlog.lag.behind(s.binlog.reached, time.Now()), true
}

// lagClock tells how late the stream is from the binlog ends
// NotifyChanges saw and no pass has reached yet, each with when it was
// first seen: the lag is the age of the oldest.
type lagClock struct {
	seen []seenEnd
}

type seenEnd struct {
	end binlogPos
	at  time.Time
}

// maxSeenEnds bounds lagClock's list (100 s of 100 ms looks): once full,
// a newer end replaces the newest one kept, whose older time it takes,
// so that the lag is never understated.
const maxSeenEnds = 1000

// observe records the server's binlog end as seen at now, the stream
// having reached reached.
func (c *lagClock) observe(end, reached binlogPos, now time.Time) {
	c.drop(reached)
	if reached.File != "" && reached.atOrPast(end) {
		return
	}
	switch n := len(c.seen); {
	case n > 0 && c.seen[n-1].end == end:
	case n == maxSeenEnds:
		c.seen[n-1].end = end
	default:
		c.seen = append(c.seen, seenEnd{end: end, at: now})
	}
}

// behind is the age at now of the oldest end seen that reached does not
// cover; 0 when it covers all.
func (c *lagClock) behind(reached binlogPos, now time.Time) time.Duration {
	c.drop(reached)
	if len(c.seen) == 0 {
		return 0
	}
	return now.Sub(c.seen[0].at)
}

// drop forgets the ends reached covers.
func (c *lagClock) drop(reached binlogPos) {
	if reached.File == "" {
		return
	}
	i := 0
	for i < len(c.seen) && reached.atOrPast(c.seen[i].end) {
		i++
	}
	c.seen = append(c.seen[:0], c.seen[i:]...)
}

var _ connector.TablePoller = (*Source)(nil)

// PollsTable reports whether the table is read by polling (no binlog): a
// read of its changes is one cheap query, which the daemon also runs
// between passes to keep each value's time.
func (s *Source) PollsTable() bool { return s.binlog == nil }
