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

// NotifyMode implements connector.ChangeNotifier: "binlog, 12 kB / 3 s
// behind" (the binlog written past the stored position and for how
// long, once seen), or empty when polling.
func (s *Source) NotifyMode() string {
	if s.binlog == nil {
		return ""
	}
	mode := "binlog"
	if _, n, ok := s.ReplicationLag(); ok {
		mode += ", " + sqlkit.ByteSize(n)
		if d, _ := s.ReplicationDelay(); d > 0 {
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
		switch {
		case !behind:
			b.behindSince = time.Time{}
			b.lagBytes, b.lagSeen = 0, true
		case b.behindSince.IsZero():
			b.behindSince = time.Now()
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

// ReplicationDelay returns how long the stream has been behind the
// server's binlog (0 when caught up), as NotifyChanges last saw it; ok
// is false in poll mode.
func (s *Source) ReplicationDelay() (time.Duration, bool) {
	if s.binlog == nil {
		return 0, false
	}
	s.binlog.mu.Lock()
	defer s.binlog.mu.Unlock()
	if s.binlog.behindSince.IsZero() {
		return 0, true
	}
	return time.Since(s.binlog.behindSince), true
}
