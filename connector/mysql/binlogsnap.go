package mysql

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/sirupsen/logrus"

	"github.com/syncd-io/syncd/connector"
	"github.com/syncd-io/syncd/internal/logfield"
)

// binlogSnapshot reads every live row in one consistent snapshot and
// returns the binlog position of that snapshot: the stream from there
// holds exactly the changes the snapshot does not.
//
// MariaDB gives the position without a lock: after START TRANSACTION
// WITH CONSISTENT SNAPSHOT its status variables binlog_snapshot_file and
// binlog_snapshot_position are the binlog position consistent with the
// transaction's snapshot, and BINLOG_GTID_POS turns it into the GTID
// position. MySQL has no such variables: the snapshot is started under
// FLUSH TABLES WITH READ LOCK, held only while the snapshot starts and
// the position is read (a few milliseconds), never for the read.
func (s *Source) binlogSnapshot(ctx context.Context, fn connector.BatchFunc) (binlogPos, error) {
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return binlogPos{}, s.readError(ctx, err)
	}
	defer conn.Close()
	exec := func(q string) error {
		if _, err := conn.ExecContext(ctx, q); err != nil {
			return s.readError(ctx, fmt.Errorf("%s: %w", q, err))
		}
		return nil
	}
	if err := exec("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ"); err != nil {
		return binlogPos{}, err
	}
	var pos binlogPos
	if s.binlog.flavor == flavorMariaDB {
		if err := exec("START TRANSACTION WITH CONSISTENT SNAPSHOT"); err != nil {
			return binlogPos{}, err
		}
		if pos, err = s.mariadbSnapshotPos(ctx, conn); err != nil {
			return binlogPos{}, err
		}
	} else {
		if pos, err = s.mysqlSnapshotPos(ctx, conn, exec); err != nil {
			return binlogPos{}, err
		}
	}
	// The transaction only reads; ending it is all that is left.
	defer conn.ExecContext(context.WithoutCancel(ctx), "ROLLBACK") //nolint:errcheck // read-only
	s.log.WithFields(logrus.Fields{logfield.Checkpoint: pos.describe()}).Info("reading the table in a consistent snapshot; the binlog is streamed from its position")
	if err := s.snapshotOn(ctx, conn, fn); err != nil {
		return binlogPos{}, err
	}
	return pos, nil
}

// mariadbSnapshotPos reads the binlog position of the transaction's
// consistent snapshot on MariaDB.
func (s *Source) mariadbSnapshotPos(ctx context.Context, conn *sql.Conn) (binlogPos, error) {
	pos := binlogPos{Flavor: flavorMariaDB}
	rows, err := conn.QueryContext(ctx, "SHOW STATUS LIKE 'binlog_snapshot_%'")
	if err != nil {
		return pos, s.readError(ctx, err)
	}
	defer rows.Close()
	for rows.Next() {
		var name, value string
		if err := rows.Scan(&name, &value); err != nil {
			return pos, s.readError(ctx, err)
		}
		switch strings.ToLower(name) {
		case "binlog_snapshot_file":
			pos.File = value
		case "binlog_snapshot_position":
			if _, err := fmt.Sscan(value, &pos.Pos); err != nil {
				return pos, fmt.Errorf("read %s: binlog_snapshot_position %q: %w", s.tbl.name, value, err)
			}
		}
	}
	if err := rows.Err(); err != nil {
		return pos, s.readError(ctx, err)
	}
	if pos.File == "" {
		return pos, fmt.Errorf("read %s: the server gives no binlog_snapshot_file (is its binlog on?)", s.tbl.name)
	}
	var gtid sql.NullString
	if err := conn.QueryRowContext(ctx, "SELECT BINLOG_GTID_POS(?, ?)", pos.File, pos.Pos).Scan(&gtid); err != nil {
		return pos, s.readError(ctx, err)
	}
	pos.GTID = gtid.String
	if pos.GTID != "" {
		set, err := parseGTIDSet(flavorMariaDB, pos.GTID)
		if err != nil {
			return pos, fmt.Errorf("read %s: %w", s.tbl.name, err)
		}
		pos.GTID = formatGTIDSet(flavorMariaDB, set)
	}
	return pos, nil
}

// mysqlSnapshotPos starts the consistent snapshot on MySQL and reads its
// binlog position (and gtid_executed with gtid_mode=ON) under a read
// lock held for those two statements only.
func (s *Source) mysqlSnapshotPos(ctx context.Context, conn *sql.Conn, exec func(string) error) (binlogPos, error) {
	pos := binlogPos{Flavor: flavorMySQL}
	if err := exec("FLUSH TABLES WITH READ LOCK"); err != nil {
		return pos, fmt.Errorf("%w (the user needs RELOAD for the first sync's consistent snapshot, or set changes: poll)", err)
	}
	defer conn.ExecContext(context.WithoutCancel(ctx), "UNLOCK TABLES") //nolint:errcheck // the connection ends with the snapshot anyway
	if err := exec("START TRANSACTION WITH CONSISTENT SNAPSHOT"); err != nil {
		return pos, err
	}
	end, err := s.binlogEnd(ctx, conn)
	if err != nil {
		return pos, err
	}
	if err := exec("UNLOCK TABLES"); err != nil {
		return pos, err
	}
	return end, nil
}

// rowQueryer runs single-row reads: the pool or one connection.
type rowQueryer interface {
	queryer
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// binlogEnd is the end of the server's binlog now (SHOW MASTER STATUS,
// SHOW BINARY LOG STATUS on MySQL 8.4 and later) with its GTID position:
// MariaDB's gtid_binlog_pos, MySQL's gtid_executed when gtid_mode is ON.
func (s *Source) binlogEnd(ctx context.Context, db rowQueryer) (binlogPos, error) {
	pos := binlogPos{Flavor: s.binlog.flavor}
	file, off, err := masterStatus(ctx, db)
	if err != nil {
		return pos, s.readError(ctx, err)
	}
	pos.File, pos.Pos = file, off
	q := "SELECT @@GLOBAL.gtid_binlog_pos"
	if s.binlog.flavor == flavorMySQL {
		q = "SELECT IF(@@GLOBAL.gtid_mode = 'ON', @@GLOBAL.gtid_executed, '')"
	}
	var gtid string
	if err := db.QueryRowContext(ctx, q).Scan(&gtid); err != nil {
		return pos, s.readError(ctx, err)
	}
	if gtid = strings.ReplaceAll(strings.TrimSpace(gtid), "\n", ""); gtid != "" {
		set, err := parseGTIDSet(pos.Flavor, gtid)
		if err != nil {
			return pos, fmt.Errorf("read %s: %w", s.tbl.name, err)
		}
		pos.GTID = formatGTIDSet(pos.Flavor, set)
	}
	return pos, nil
}

// masterStatus reads the current binlog file and offset.
func masterStatus(ctx context.Context, db queryer) (string, uint32, error) {
	rows, err := db.QueryContext(ctx, "SHOW MASTER STATUS")
	if err != nil && strings.Contains(err.Error(), "1064") {
		rows, err = db.QueryContext(ctx, "SHOW BINARY LOG STATUS") // MySQL 8.4
	}
	if err != nil {
		return "", 0, fmt.Errorf("binlog status: %w", err)
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return "", 0, fmt.Errorf("binlog status: %w", err)
	}
	if !rows.Next() {
		if err := rows.Err(); err != nil {
			return "", 0, fmt.Errorf("binlog status: %w", err)
		}
		return "", 0, fmt.Errorf("binlog status: no binary log (log_bin is off)")
	}
	vals := make([]sql.RawBytes, len(cols))
	dest := make([]any, len(cols))
	for i := range vals {
		dest[i] = &vals[i]
	}
	if err := rows.Scan(dest...); err != nil || len(vals) < 2 {
		return "", 0, fmt.Errorf("binlog status: %v", err)
	}
	var off uint32
	if _, err := fmt.Sscan(string(vals[1]), &off); err != nil {
		return "", 0, fmt.Errorf("binlog status: position %q: %w", vals[1], err)
	}
	return string(vals[0]), off, rows.Err()
}

// binlogFile is one binary log file and its size.
type binlogFile struct {
	name string
	size int64
}

// binlogFiles lists the server's binary logs (SHOW BINARY LOGS), oldest
// first.
func binlogFiles(ctx context.Context, db queryer) ([]binlogFile, error) {
	rows, err := db.QueryContext(ctx, "SHOW BINARY LOGS")
	if err != nil {
		return nil, fmt.Errorf("list binary logs: %w", err)
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return nil, fmt.Errorf("list binary logs: %w", err)
	}
	var out []binlogFile
	vals := make([]sql.RawBytes, len(cols))
	dest := make([]any, len(cols))
	for i := range vals {
		dest[i] = &vals[i]
	}
	for rows.Next() {
		if err := rows.Scan(dest...); err != nil {
			return nil, fmt.Errorf("list binary logs: %w", err)
		}
		f := binlogFile{name: string(vals[0])}
		if len(vals) > 1 {
			_, _ = fmt.Sscan(string(vals[1]), &f.size)
		}
		out = append(out, f)
	}
	return out, rows.Err()
}

// binlogBehind is how many bytes of binlog lie between from and to, by
// the files' sizes; files gone count for nothing.
func binlogBehind(files []binlogFile, from, to binlogPos) int64 {
	if from.atOrPast(to) {
		return 0
	}
	if from.File == to.File {
		return int64(to.Pos) - int64(from.Pos)
	}
	var n int64
	for _, f := range files {
		switch {
		case f.name == from.File:
			n += max(f.size-int64(from.Pos), 0)
		case f.name == to.File:
			n += int64(to.Pos)
		case (binlogPos{File: f.name}).atOrPast(from) && to.atOrPast(binlogPos{File: f.name}):
			n += f.size
		}
	}
	return n
}
