package mysql

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	gomysql "github.com/go-mysql-org/go-mysql/mysql"
	"github.com/go-mysql-org/go-mysql/replication"
	"github.com/sirupsen/logrus"

	"github.com/syncd-io/syncd/connector"
	"github.com/syncd-io/syncd/connector/sqlkit"
	"github.com/syncd-io/syncd/internal/logfield"
)

// receiveWait bounds one wait for an event.
const receiveWait = 100 * time.Millisecond

// stallAfter is how long a pass waits for an event before it takes the
// stream as caught up (the server skips what precedes a GTID position
// without a word).
const stallAfter = 2 * time.Second

// reconnects is how many times a pass connects again after its
// replication connection broke (a server restart, a KILL), from the
// position it last stored, before the pass fails.
const reconnects = 3

// binlogStream is one pass over the binlog.
type binlogStream struct {
	s   *Source
	fn  connector.BatchFunc
	dec *rowDecoder

	// cur is the position after the last event read; stored the
	// checkpoint last delivered (so stored by the caller); lastCommit the
	// end of the last transaction read whole.
	cur, stored, lastCommit binlogPos
	// txGTID is the GTID of the transaction being read.
	txGTID  string
	inTx    bool
	pending []connector.Record
	// committed is how many of the pending records belong to
	// transactions read whole (they come first).
	committed int
	// unstored is set once records went out without a checkpoint (a
	// large transaction in parts): its end is stored as soon as it is
	// read, so that a broken connection reads none of it again.
	unstored      bool
	rows, batches int
}

// binlogChanges is Changes in binlog mode.
func (s *Source) binlogChanges(ctx context.Context, checkpoint string, fn connector.BatchFunc) error {
	started := time.Now()
	from, ok, err := parseBinlogCheckpoint(checkpoint)
	if err != nil {
		return fmt.Errorf("read %s: %w", s.tbl.name, err)
	}
	b := s.binlog
	b.mu.Lock()
	resume := b.resume
	b.resume = nil
	if b.dec == nil {
		b.dec = newRowDecoder(s)
	}
	dec := b.dec
	b.mu.Unlock()
	st := &binlogStream{s: s, fn: fn, dec: dec, stored: from}
	switch {
	case resume != nil:
		// A resync read the table in a consistent snapshot: go on from it.
		from = *resume
		st.stored = binlogPos{}
	case !ok:
		// The first pass: the table read in a consistent snapshot.
		if from, err = s.binlogSnapshot(ctx, fn); err != nil {
			return err
		}
		st.stored = binlogPos{}
	}
	if err := st.deliver(ctx, 0, &from); err != nil {
		return err
	}
	target, err := s.binlogEnd(ctx, s.db)
	if err != nil {
		return err
	}
	if !from.atOrPast(target) {
		if from.GTID == "" {
			if err := s.checkFile(ctx, from); err != nil {
				return err
			}
		}
		for attempt := 1; ; attempt++ {
			err := st.run(ctx, target)
			if err == nil {
				break
			}
			if !errors.Is(err, errConnection) || attempt > reconnects || ctx.Err() != nil {
				return err
			}
			s.log.WithError(err).WithField(logfield.Checkpoint, st.stored.describe()).Warn("binlog connection broke; connecting again from the stored position")
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(time.Duration(attempt) * 200 * time.Millisecond):
			}
		}
	}
	b.mu.Lock()
	if target.atOrPast(b.reached) || b.reached.File == "" {
		b.reached = target
	}
	b.mu.Unlock()
	s.log.WithFields(logrus.Fields{logfield.Rows: st.rows, logfield.Batches: st.batches, logfield.Checkpoint: st.stored.describe(),
		logfield.Duration: time.Since(started)}).Debug("mysql changes streamed")
	return nil
}

// errConnection marks a broken replication connection, after which a
// pass connects again.
var errConnection = errors.New("replication connection broke")

// checkFile makes sure the binlog file of a position without GTID is
// still on the server.
func (s *Source) checkFile(ctx context.Context, from binlogPos) error {
	files, err := binlogFiles(ctx, s.db)
	if err != nil {
		return s.readError(ctx, err)
	}
	if slices.ContainsFunc(files, func(f binlogFile) bool { return f.name == from.File }) {
		return nil
	}
	s.log.WithField(logfield.Checkpoint, from.describe()).Error("the binlog file of the checkpoint was purged (expire_logs_days, binlog_expire_logs_seconds, PURGE BINARY LOGS); resyncing the connector")
	return fmt.Errorf("binlog %s was purged: %w", from.File, connector.ErrResyncNeeded)
}

// syncerConfig is the replication connection's configuration.
func (s *Source) syncerConfig(st *binlogStream) replication.BinlogSyncerConfig {
	b := s.binlog
	host, port := b.addr, uint16(3306)
	if h, p, err := net.SplitHostPort(b.addr); err == nil {
		n, _ := strconv.ParseUint(p, 10, 16)
		host, port = h, uint16(n)
	}
	return replication.BinlogSyncerConfig{
		ServerID:                b.serverID,
		Flavor:                  b.flavor,
		Host:                    host,
		Port:                    port,
		User:                    b.user,
		Password:                b.password,
		TLSConfig:               b.tls,
		Localhost:               "syncd",
		TimestampStringLocation: time.UTC,
		HeartbeatPeriod:         5 * time.Second,
		ReadTimeout:             30 * time.Second,
		DisableRetrySync:        true,
		EventCacheCount:         1024,
		Logger:                  slog.New(slog.DiscardHandler),
		RowsEventDecodeFunc:     st.decodeRows,
	}
}

// ours reports whether a table map names the connector's table.
func (s *Source) ours(m *replication.TableMapEvent) bool {
	return m != nil && string(m.Table) == s.binlog.name && string(m.Schema) == s.binlog.schema
}

// decodeRows decodes the rows of the connector's table only: the row
// events of other tables are skipped undecoded.
func (st *binlogStream) decodeRows(e *replication.RowsEvent, data []byte) error {
	pos, err := e.DecodeHeader(data)
	if err != nil {
		return err
	}
	if !st.s.ours(e.Table) {
		return nil
	}
	return e.DecodeData(pos, data)
}

// run streams from the stored position until the binlog end target.
func (st *binlogStream) run(ctx context.Context, target binlogPos) error {
	s := st.s
	syncer := replication.NewBinlogSyncer(s.syncerConfig(st))
	defer syncer.Close()
	from := st.stored
	var (
		streamer *replication.BinlogStreamer
		err      error
	)
	if from.GTID != "" {
		set, perr := parseGTIDSet(from.Flavor, from.GTID)
		if perr != nil {
			return fmt.Errorf("read %s: %w", s.tbl.name, perr)
		}
		streamer, err = syncer.StartSyncGTID(set)
	} else {
		streamer, err = syncer.StartSync(gomysql.Position{Name: from.File, Pos: from.Pos})
	}
	if err != nil {
		return st.streamError(ctx, err)
	}
	s.binlog.setConn(syncer.LastConnectionID())
	defer s.binlog.setConn(0)
	st.cur, st.lastCommit, st.inTx, st.txGTID = from, from, false, ""
	st.pending, st.committed, st.unstored = st.pending[:0], 0, false
	progressed := time.Now()
	for {
		rctx, cancel := context.WithTimeout(ctx, receiveWait)
		ev, err := streamer.GetEvent(rctx)
		cancel()
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if !errors.Is(err, context.DeadlineExceeded) {
				return st.streamError(ctx, err)
			}
		} else {
			progressed = time.Now()
			if err := st.handle(ctx, ev); err != nil {
				return err
			}
		}
		if !st.inTx && (st.cur.atOrPast(target) || time.Since(progressed) >= stallAfter) {
			return st.deliver(ctx, len(st.pending), &st.lastCommit)
		}
	}
}

// streamError classifies an error of the replication connection: a
// binlog gone from the server needs a resync; others break the
// connection.
func (st *binlogStream) streamError(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	err = st.s.red.Redact(err)
	if gomysql.ErrorCode(err.Error()) == gomysql.ER_MASTER_FATAL_ERROR_READING_BINLOG {
		st.s.log.WithError(err).WithField(logfield.Checkpoint, st.stored.describe()).
			Error("the binlog the checkpoint needs is gone from the server (purged, expire_logs_days, binlog_expire_logs_seconds); resyncing the connector")
		return fmt.Errorf("read %s from %s: %w: %w", st.s.tbl.name, st.stored.describe(), err, connector.ErrResyncNeeded)
	}
	return fmt.Errorf("read %s: %w: %w", st.s.tbl.name, errConnection, err)
}

// handle takes one event.
func (st *binlogStream) handle(ctx context.Context, ev *replication.BinlogEvent) error {
	if rot, ok := ev.Event.(*replication.RotateEvent); ok {
		st.cur.File, st.cur.Pos = string(rot.NextLogName), uint32(rot.Position)
		return nil
	}
	if ev.Header.LogPos > 0 {
		st.cur.Pos = ev.Header.LogPos
	}
	switch e := ev.Event.(type) {
	case *replication.TransactionPayloadEvent:
		// MySQL's compressed transactions hold their events.
		for _, inner := range e.Events {
			inner.Header.LogPos = 0 // inner events have no position of their own
			if err := st.handle(ctx, inner); err != nil {
				return err
			}
		}
	case *replication.MariadbGTIDEvent:
		st.inTx, st.txGTID = true, e.GTID.String()
	case *replication.GTIDEvent:
		st.inTx, st.txGTID = true, ""
		if next, err := e.GTIDNext(); err == nil && st.cur.GTID != "" {
			st.txGTID = next.String()
		}
	case *replication.XIDEvent:
		return st.commit(ctx)
	case *replication.QueryEvent:
		return st.query(ctx, string(e.Schema), string(e.Query))
	case *replication.TableMapEvent:
		if st.s.ours(e) && !st.dec.fits(e) {
			if err := st.dec.reload(ctx); err != nil {
				return st.stop(ctx, err)
			}
			if !st.dec.fits(e) {
				st.s.log.Error("the binlog's rows of the table have other columns than the table has now (changed while syncd was stopped?); resyncing the connector")
				return st.stop(ctx, fmt.Errorf("%s: the binlog's rows have %d columns, the table %d: %w", st.s.tbl.name, e.ColumnCount, len(st.dec.cols), connector.ErrResyncNeeded))
			}
		}
	case *replication.RowsEvent:
		if e.Rows == nil || !st.s.ours(e.Table) {
			return nil
		}
		recs, err := st.dec.records(e)
		if err != nil {
			return st.stop(ctx, err)
		}
		return st.add(ctx, recs)
	}
	return nil
}

// commit ends the transaction being read.
func (st *binlogStream) commit(ctx context.Context) error {
	st.inTx = false
	if st.txGTID != "" {
		set, err := addGTID(st.cur.Flavor, st.cur.GTID, st.txGTID)
		if err != nil {
			return fmt.Errorf("read %s: %w", st.s.tbl.name, err)
		}
		st.cur.GTID = set
	}
	st.txGTID = ""
	st.lastCommit = st.cur
	st.committed = len(st.pending)
	if len(st.pending) >= st.s.batchSize || (st.unstored && len(st.pending) == 0) {
		return st.deliver(ctx, len(st.pending), &st.lastCommit)
	}
	return nil
}

// ddl matches the statements that change or empty a table, with the
// table's name (maybe db.table, maybe quoted).
var ddl = regexp.MustCompile(`(?is)^\s*(?:/\*.*?\*/\s*)*(truncate(?:\s+table)?|alter(?:\s+online)?(?:\s+ignore)?\s+table|rename\s+table|drop\s+table(?:\s+if\s+exists)?|create\s+(?:or\s+replace\s+)?table|insert|update|delete|replace)\s`)

// query takes a statement of the binlog: BEGIN and COMMIT of
// transactions, and the statements that carry no rows: TRUNCATE (a
// resync, whose deletions go through the guard), ALTER TABLE and the
// like (the columns read again), DML written with binlog_format
// STATEMENT by a session that set it (a resync: its rows are not in the
// binlog). Any other statement is a transaction of its own.
func (st *binlogStream) query(ctx context.Context, schema, q string) error {
	up := strings.ToUpper(strings.TrimSpace(q))
	switch {
	case up == "BEGIN" || strings.HasPrefix(up, "XA START"):
		st.inTx = true
		return nil
	case strings.HasPrefix(up, "SAVEPOINT") || strings.HasPrefix(up, "ROLLBACK TO") ||
		(strings.HasPrefix(up, "XA ") && !strings.HasPrefix(up, "XA COMMIT") && !strings.HasPrefix(up, "XA ROLLBACK")):
		return nil
	}
	m := ddl.FindStringSubmatch(q)
	ours := m != nil && st.names(schema, q[len(m[0]):])
	verb := ""
	if m != nil {
		verb = strings.ToLower(strings.Fields(m[1])[0])
	}
	switch verb {
	case "insert", "update", "delete", "replace":
		if ours {
			st.s.log.Error("a change of the table was written as a statement, not rows (a session set binlog_format = STATEMENT); resyncing the connector")
			return st.stop(ctx, fmt.Errorf("%s: a change written as a statement: %w", st.s.tbl.name, connector.ErrResyncNeeded))
		}
		return nil // part of its transaction
	case "truncate":
		if ours {
			if err := st.deliver(ctx, st.committed, &st.lastCommit); err != nil {
				return err
			}
			st.s.log.Warn("table truncated; resyncing the connector (its deletions go through the mass-delete guard)")
			return fmt.Errorf("%s was truncated: %w", st.s.tbl.name, connector.ErrResyncNeeded)
		}
	}
	if ours {
		// ALTER, RENAME, DROP, CREATE: the columns of what follows.
		if err := st.dec.reload(ctx); err != nil {
			return st.stop(ctx, err)
		}
	}
	return st.commit(ctx)
}

// names reports whether the start of a statement's rest names the
// connector's table (schema is the statement's default database).
func (st *binlogStream) names(schema, rest string) bool {
	b := st.s.binlog
	name := strings.TrimSpace(rest)
	if i := strings.IndexAny(name, " \t\r\n(;,"); i >= 0 {
		name = name[:i]
	}
	unq := func(p string) string { return strings.Trim(p, "`\"") }
	db, tbl := schema, unq(name)
	if i := strings.LastIndex(name, "."); i >= 0 {
		db, tbl = unq(name[:i]), unq(name[i+1:])
	}
	return strings.EqualFold(tbl, b.name) && strings.EqualFold(db, b.schema)
}

// stop delivers the transactions read whole, then returns err: the pass
// ends before the change that failed.
func (st *binlogStream) stop(ctx context.Context, err error) error {
	if derr := st.deliver(ctx, st.committed, &st.lastCommit); derr != nil {
		return errors.Join(err, derr)
	}
	if errors.Is(err, ErrColumnGone) {
		st.s.log.WithError(err).Error("table changed under the mapping")
	}
	return err
}

// add queues records and delivers a batch whenever batchSize are
// queued.
func (st *binlogStream) add(ctx context.Context, recs []connector.Record) error {
	for _, r := range recs {
		st.pending = append(st.pending, r)
		if len(st.pending) < st.s.batchSize {
			continue
		}
		var err error
		if st.committed > 0 {
			// The transactions read whole, with their checkpoint.
			err = st.deliver(ctx, st.committed, &st.lastCommit)
		} else {
			// Part of a large transaction: no checkpoint until its end.
			err = st.deliver(ctx, len(st.pending), nil)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// deliver hands the first n queued records to the batch function, with
// checkpoint at when it differs from the one last stored (at must then
// cover exactly those records' transactions).
func (st *binlogStream) deliver(ctx context.Context, n int, at *binlogPos) error {
	moved := at != nil && *at != st.stored
	if n == 0 && !moved {
		return nil
	}
	b := connector.Batch{Records: sqlkit.LatestPerID(st.pending[:n])}
	if moved {
		b.Checkpoint = at.String()
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := st.fn(ctx, b); err != nil {
		return fmt.Errorf("mysql batch of %s: %w", st.s.tbl.name, err)
	}
	st.rows += n
	st.batches++
	st.pending = append(st.pending[:0], st.pending[n:]...)
	st.committed = max(st.committed-n, 0)
	if moved {
		st.stored = *at
		st.unstored = false
	} else if n > 0 {
		st.unstored = true
	}
	return nil
}

// setConn records the server's id of the replication connection.
func (b *binlogState) setConn(id uint32) {
	b.mu.Lock()
	b.connID = id
	if id != 0 {
		b.opened++
	}
	b.mu.Unlock()
}
