package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/jackc/pglogrepl"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/sirupsen/logrus"

	"github.com/syncd-io/syncd/connector"
	"github.com/syncd-io/syncd/connector/sqlkit"
	"github.com/syncd-io/syncd/internal/logfield"
)

// ErrColumnGone is returned (wrapped) when the table lost a column the
// connector reads: the pass stops before the change that lacks it, and
// stops there again until the column is back or the mapping no longer
// needs it.
var ErrColumnGone = errors.New("mapped column gone from the table")

// statusEvery is how often a standby status update is sent while a pass
// streams or applies a batch, well within the server's wal_sender_timeout
// (one minute by default).
const statusEvery = 10 * time.Second

// receiveWait bounds one wait for a message; after it the server is
// asked for a keepalive, which says how far it has read the WAL (a status
// update of 34 bytes).
const receiveWait = 50 * time.Millisecond

// stallAfter is how long a pass waits for the server's position to move
// before it takes the stream as caught up.
const stallAfter = 2 * time.Second

// slotRelease bounds the wait for the server to release the slot after a
// replication connection closed.
const slotRelease = 10 * time.Second

// lsnCheckpoint is a checkpoint in logical mode: every transaction that
// committed before LSN has been delivered and applied.
type lsnCheckpoint struct {
	LSN string `json:"lsn"`
}

func encodeLSN(l pglogrepl.LSN) string {
	b, _ := json.Marshal(lsnCheckpoint{LSN: l.String()})
	return string(b)
}

// checkpointLSN returns the LSN of a logical checkpoint, or ok false for
// an empty checkpoint or one of poll mode.
func checkpointLSN(checkpoint string) (pglogrepl.LSN, bool, error) {
	if checkpoint == "" {
		return 0, false, nil
	}
	var c lsnCheckpoint
	if err := json.Unmarshal([]byte(checkpoint), &c); err != nil {
		return 0, false, fmt.Errorf("checkpoint %q: %w", checkpoint, err)
	}
	if c.LSN == "" {
		return 0, false, nil
	}
	l, err := pglogrepl.ParseLSN(c.LSN)
	if err != nil {
		return 0, false, fmt.Errorf("checkpoint %q: %w", checkpoint, err)
	}
	return l, true, nil
}

// stream is one pass over the replication stream.
type stream struct {
	s    *Source
	conn *pgconn.PgConn
	fn   connector.BatchFunc
	dec  *decoder

	// stored is the checkpoint last delivered with a batch (and so stored
	// by the caller); confirmed is what the server was last told.
	stored, confirmed pglogrepl.LSN
	lastStatus        time.Time
	// lastCommit is the end of the last transaction received whole.
	lastCommit pglogrepl.LSN
	inTx       bool
	pending    []connector.Record
	// committed is how many of the pending records belong to transactions
	// received whole (they come first).
	committed int
	batches   int
	rows      int
}

// streamChanges is Changes in logical mode.
func (s *Source) streamChanges(ctx context.Context, checkpoint string, fn connector.BatchFunc) error {
	started := time.Now()
	start, ok, err := checkpointLSN(checkpoint)
	if err != nil {
		return fmt.Errorf("read %s: %w", s.tbl.name, err)
	}
	if !ok {
		// The first pass: the slot and the table read in its snapshot.
		if start, err = s.createSlot(ctx, fn); err != nil {
			return err
		}
	} else if err := s.checkSlot(ctx, start); err != nil {
		return err
	}
	conn, err := s.replConn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	var target pglogrepl.LSN
	if err := s.pool.QueryRow(ctx, "SELECT pg_current_wal_flush_lsn()").Scan(&target); err != nil {
		return s.readError(ctx, err)
	}
	err = pglogrepl.StartReplication(ctx, conn, s.logical.slot, start, pglogrepl.StartReplicationOptions{
		Mode: pglogrepl.LogicalReplication,
		PluginArgs: []string{
			"proto_version '1'",
			"publication_names " + quoteLiteral(pgx.Identifier{s.logical.publication}.Sanitize()),
		},
	})
	if err != nil {
		return fmt.Errorf("start replication from slot %s: %w", s.logical.slot, s.red.redact(err))
	}
	st := &stream{s: s, conn: conn, fn: fn, dec: newDecoder(s), stored: start, confirmed: start, lastCommit: start}
	if !ok {
		// The snapshot's rows are applied: the stream starts here.
		st.stored = 0
		if err := st.deliver(ctx, 0, start); err != nil {
			return err
		}
	}
	// Ask at once how far the server has read, so that a pass with
	// nothing to stream ends within one round trip.
	if err := st.status(ctx, true); err != nil {
		return err
	}
	reached, err := st.run(ctx, target)
	if err != nil {
		return err
	}
	s.logical.mu.Lock()
	s.logical.reached = max(s.logical.reached, reached)
	s.logical.mu.Unlock()
	s.log.WithFields(logrus.Fields{logfield.Rows: st.rows, logfield.Batches: st.batches, logfield.Lsn: reached.String(),
		logfield.Duration: time.Since(started)}).Debug("postgres changes streamed")
	return nil
}

// checkSlot makes sure the slot still holds every change after the
// checkpoint at: it exists, is not invalidated, is not used by another
// process, and was not recreated past the checkpoint behind syncd's back.
func (s *Source) checkSlot(ctx context.Context, at pglogrepl.LSN) error {
	si, err := s.slot(ctx)
	// The walsender of the previous pass may still be ending.
	for wait := time.Now(); err == nil && si.active && time.Since(wait) < slotRelease; {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
		si, err = s.slot(ctx)
	}
	if err != nil {
		return err
	}
	s.logical.mu.Lock()
	recreated := s.logical.recreated
	s.logical.mu.Unlock()
	switch {
	case !si.exists:
		s.log.WithField(logfield.Checkpoint, at.String()).Error("replication slot is gone; recreating it and resyncing the connector")
		return fmt.Errorf("slot %s does not exist: %w", s.logical.slot, connector.ErrResyncNeeded)
	case si.lost:
		s.log.WithField(logfield.Checkpoint, at.String()).Error("replication slot was invalidated (its WAL was removed, see max_slot_wal_keep_size); recreating it and resyncing the connector")
		return fmt.Errorf("slot %s was invalidated: %w", s.logical.slot, connector.ErrResyncNeeded)
	case si.plugin != "pgoutput":
		return fmt.Errorf("slot %s uses plugin %q, not pgoutput: drop it or name another slot", s.logical.slot, si.plugin)
	case si.active:
		return fmt.Errorf("slot %s is in use by another connection (a second syncd on this table?)", s.logical.slot)
	case si.confirmed > at && si.confirmed != recreated:
		// syncd confirms only what it stored: a slot ahead of the
		// checkpoint was made by someone else.
		s.log.WithFields(logrus.Fields{logfield.Checkpoint: at.String(), logfield.SlotLsn: si.confirmed.String()}).
			Error("replication slot is ahead of the checkpoint (recreated behind syncd's back); resyncing the connector")
		return fmt.Errorf("slot %s confirmed %s, past the checkpoint %s: %w", s.logical.slot, si.confirmed, at, connector.ErrResyncNeeded)
	}
	return nil
}

// run reads the stream until it has caught up with target and returns
// the position reached, which is then confirmed.
func (st *stream) run(ctx context.Context, target pglogrepl.LSN) (pglogrepl.LSN, error) {
	var (
		walEnd pglogrepl.LSN
		// progressed is when data last came or the server's position
		// last moved.
		progressed = time.Now()
	)
	for {
		if time.Since(st.lastStatus) >= statusEvery {
			if err := st.status(ctx, false); err != nil {
				return 0, err
			}
		}
		rctx, cancel := context.WithTimeout(ctx, receiveWait)
		msg, err := st.conn.ReceiveMessage(rctx)
		cancel()
		if err != nil {
			if ctx.Err() != nil {
				return 0, ctx.Err()
			}
			if pgconn.Timeout(err) {
				if err := st.status(ctx, true); err != nil {
					return 0, err
				}
				continue
			}
			return 0, st.s.readError(ctx, err)
		}
		switch msg := msg.(type) {
		case *pgproto3.ErrorResponse:
			return 0, st.s.readError(ctx, pgconn.ErrorResponseToPgError(msg))
		case *pgproto3.CopyData:
			if len(msg.Data) == 0 {
				continue
			}
			switch msg.Data[0] {
			case pglogrepl.PrimaryKeepaliveMessageByteID:
				pkm, err := pglogrepl.ParsePrimaryKeepaliveMessage(msg.Data[1:])
				if err != nil {
					return 0, fmt.Errorf("read %s: keepalive: %w", st.s.tbl.name, err)
				}
				if pkm.ServerWALEnd > walEnd {
					walEnd, progressed = pkm.ServerWALEnd, time.Now()
				}
				if pkm.ReplyRequested {
					if err := st.status(ctx, false); err != nil {
						return 0, err
					}
				}
				// Caught up: the server has read the WAL flushed when the
				// pass began; or, should that position fall inside a record
				// still being written, it has not moved for stallAfter.
				caughtUp := walEnd >= target || time.Since(progressed) >= stallAfter
				if caughtUp && !st.inTx {
					// Every transaction before walEnd was received: after
					// the last batch is applied, the slot may move there.
					end := max(walEnd, st.lastCommit)
					if err := st.deliver(ctx, len(st.pending), end); err != nil {
						return 0, err
					}
					return end, nil
				}
			case pglogrepl.XLogDataByteID:
				xld, err := pglogrepl.ParseXLogData(msg.Data[1:])
				if err != nil {
					return 0, fmt.Errorf("read %s: xlog data: %w", st.s.tbl.name, err)
				}
				progressed = time.Now()
				walEnd = max(walEnd, xld.ServerWALEnd)
				if err := st.handle(ctx, xld.WALData); err != nil {
					return 0, err
				}
			}
		}
	}
}

// handle takes one pgoutput message.
func (st *stream) handle(ctx context.Context, data []byte) error {
	m, err := pglogrepl.Parse(data)
	if err != nil {
		return fmt.Errorf("read %s: decode change: %w", st.s.tbl.name, err)
	}
	switch m := m.(type) {
	case *pglogrepl.RelationMessage:
		if err := st.dec.relation(m); err != nil {
			// Deliver the transactions before, then stop here.
			if derr := st.deliver(ctx, st.committed, st.lastCommit); derr != nil {
				return errors.Join(err, derr)
			}
			st.s.log.WithError(err).Error("table changed under the mapping")
			return err
		}
	case *pglogrepl.BeginMessage:
		st.inTx = true
	case *pglogrepl.CommitMessage:
		st.inTx = false
		st.lastCommit = m.TransactionEndLSN
		st.committed = len(st.pending)
		if len(st.pending) >= st.s.batchSize {
			return st.deliver(ctx, len(st.pending), st.lastCommit)
		}
	case *pglogrepl.InsertMessage:
		return st.add(ctx, m.RelationID, nil, m.Tuple)
	case *pglogrepl.UpdateMessage:
		return st.add(ctx, m.RelationID, m.OldTuple, m.NewTuple)
	case *pglogrepl.DeleteMessage:
		return st.add(ctx, m.RelationID, m.OldTuple, nil)
	case *pglogrepl.TruncateMessage:
		for _, rel := range m.RelationIDs {
			if rel == st.s.tbl.oid {
				return st.truncated(ctx)
			}
		}
	}
	return nil
}

// add queues the record of an insert (old nil), update or delete (new
// nil), and delivers a batch when batchSize records are queued.
func (st *stream) add(ctx context.Context, rel uint32, old, new *pglogrepl.TupleData) error {
	if rel != st.s.tbl.oid {
		return nil
	}
	recs, err := st.dec.records(rel, old, new)
	if err != nil {
		return err
	}
	st.pending = append(st.pending, recs...)
	if len(st.pending) < st.s.batchSize {
		return nil
	}
	if st.committed > 0 {
		// The transactions received whole, with their checkpoint.
		return st.deliver(ctx, st.committed, st.lastCommit)
	}
	// Part of a large transaction: no checkpoint until its end.
	return st.deliver(ctx, len(st.pending), st.stored)
}

// truncated handles a TRUNCATE of the table: the rows it removed are not
// in the stream, so the changes before it are delivered, the slot is
// dropped and the connector resynced (whose deletions go through the
// mass-delete guard); the resync's snapshot creates the slot again.
func (st *stream) truncated(ctx context.Context) error {
	if err := st.deliver(ctx, st.committed, st.lastCommit); err != nil {
		return err
	}
	st.s.log.Warn("table truncated; resyncing the connector (its deletions go through the mass-delete guard)")
	st.conn.Close(context.WithoutCancel(ctx))
	if err := st.s.dropSlot(ctx); err != nil {
		return err
	}
	return fmt.Errorf("%s was truncated: %w", st.s.tbl.name, connector.ErrResyncNeeded)
}

// deliver hands the first n queued records to the batch function, with
// checkpoint at when it is past the last one stored (at must then cover
// exactly those records' transactions), and then confirms it to the
// server. Status updates keep going while the batch is applied.
func (st *stream) deliver(ctx context.Context, n int, at pglogrepl.LSN) error {
	if n == 0 && at <= st.stored {
		return nil
	}
	recs, err := st.dec.complete(ctx, sqlkit.LatestPerID(st.pending[:n]))
	if err != nil {
		return err
	}
	b := connector.Batch{Records: recs}
	if at > st.stored {
		b.Checkpoint = encodeLSN(at)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := st.whileApplying(ctx, func() error { return st.fn(ctx, b) }); err != nil {
		return fmt.Errorf("postgres batch of %s: %w", st.s.tbl.name, err)
	}
	st.rows += n
	st.batches++
	st.pending = append(st.pending[:0], st.pending[n:]...)
	st.committed = max(st.committed-n, 0)
	if at > st.stored {
		st.stored = at
		st.confirmed = at
		return st.status(ctx, false)
	}
	return nil
}

// whileApplying runs apply, sending status updates meanwhile so that the
// server does not end the connection of a slow batch for silence.
func (st *stream) whileApplying(ctx context.Context, apply func() error) error {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(statusEvery)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				_ = st.sendStatus(ctx, false) // a failure shows on the next receive
			}
		}
	}()
	err := apply()
	close(done)
	wg.Wait()
	return err
}

// status tells the server the confirmed position.
func (st *stream) status(ctx context.Context, reply bool) error {
	if err := st.sendStatus(ctx, reply); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("standby status to slot %s: %w", st.s.logical.slot, err)
	}
	st.lastStatus = time.Now()
	return nil
}

func (st *stream) sendStatus(ctx context.Context, reply bool) error {
	return pglogrepl.SendStandbyStatusUpdate(ctx, st.conn, pglogrepl.StandbyStatusUpdate{
		WALWritePosition: st.confirmed,
		ReplyRequested:   reply,
	})
}
