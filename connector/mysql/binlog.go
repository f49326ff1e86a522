package mysql

// Binlog mode (changes: binlog, or auto when the server allows it). The
// table's changes come from the server's binary log, read as a replica
// reads it (github.com/go-mysql-org/go-mysql's replication package,
// COM_BINLOG_DUMP under a server id of syncd's own):
//
//   - The first pass (an empty checkpoint, or one of poll mode) reads the
//     table in a consistent snapshot whose binlog position it learns in
//     the same transaction (snapshot.go's binlogSnapshot), then streams
//     from that position: a change is either in the snapshot or in the
//     stream, never in both or neither.
//   - A pass streams from the checkpoint's position (its GTID set where
//     the server has GTIDs, else file and offset) until it reached the
//     end of the binlog as it was when the pass began. Row events of
//     other tables are skipped undecoded. Records come in commit order,
//     in batches of batchSize (a large transaction in several); a batch's
//     checkpoint is the end of the last transaction it completes, so a
//     crash replays whole transactions from there and never skips one.
//   - TRUNCATE of the table (a statement in the binlog, carrying no rows)
//     and a binlog purged past the checkpoint end the pass with
//     connector.ErrResyncNeeded: the resync's snapshot (in binlog mode a
//     consistent one) is where the stream goes on from, and its
//     deletions go through the mass-delete guard.
//   - ALTER TABLE of the table makes the stream read the table's columns
//     again; a column the connector reads that is gone stops the pass
//     before the change lacking it (ErrColumnGone), pass after pass, until
//     it is back or the settings no longer name it.

import (
	"context"
	"crypto/tls"
	"database/sql"
	"errors"
	"fmt"
	"hash/fnv"
	"strings"
	"sync"

	"github.com/go-sql-driver/mysql"

	"github.com/syncd-io/syncd/connector"
	"github.com/syncd-io/syncd/internal/logfield"
)

// Change modes (the changes setting).
const (
	ChangesAuto   = "auto"
	ChangesBinlog = "binlog"
	ChangesPoll   = "poll"
	// DefaultChanges is auto: a table streams when the server allows it
	// and polls, with a note saying why, when it does not.
	DefaultChanges = ChangesAuto
)

// ErrColumnGone is returned (wrapped) when the table lost a column the
// connector reads: the pass stops before the change that lacks it, and
// stops there again until the column is back or the settings no longer
// name it.
var ErrColumnGone = errors.New("mapped column gone from the table")

func (s *Settings) validateBinlog() []error {
	switch s.Changes {
	case ChangesAuto, ChangesBinlog, ChangesPoll, "":
		return nil
	}
	return []error{fmt.Errorf("changes: %q is not auto, binlog or poll", s.Changes)}
}

// binlogState is what a source in binlog mode keeps between passes.
type binlogState struct {
	flavor   string
	serverID uint32
	// schema and table name the table as the binlog does.
	schema, name string
	// settings and fields re-read the table's columns after an ALTER.
	settings *Settings
	fields   []string
	// addr, user, password and tls connect the replication connection.
	addr, user, password string
	tls                  *tls.Config

	mu sync.Mutex
	// reached is the server's binlog end that the last pass caught up
	// with.
	reached binlogPos
	// resume is the position of the consistent snapshot a resync read:
	// the next pass goes on from there rather than from its checkpoint.
	resume *binlogPos
	// lagBytes is how much binlog the server wrote past the stored
	// position, as NotifyChanges last saw it; lag how late the stream is.
	lagBytes int64
	lagSeen  bool
	lag      lagClock
	// dec decodes the table's rows in the columns the stream last saw.
	dec *rowDecoder
	// connID is the server's id of the replication connection of the
	// pass in progress (0 between passes); opened counts them.
	connID uint32
	opened int
}

// serverState is what decides whether the binlog can be read: the
// server's settings and the user's grants.
type serverState struct {
	logBin             bool
	format, rowImage   string
	replSlave, replCli bool
}

// binlogBlocker says what keeps the binlog from giving table's changes,
// with what to change, or "" when nothing does. view is set for a view,
// whose changes the binlog does not carry.
func binlogBlocker(table string, view bool, st serverState) string {
	var missing []string
	if !st.replSlave {
		missing = append(missing, "REPLICATION SLAVE")
	}
	if !st.replCli {
		missing = append(missing, "REPLICATION CLIENT")
	}
	switch {
	case view:
		return fmt.Sprintf("%s is a view, whose changes the binlog carries as its tables'; keep changes: poll, or name the table", table)
	case !st.logBin:
		return "the server's binary log is off: set log_bin (and a server_id) in its configuration file and restart it"
	case !strings.EqualFold(st.format, "ROW"):
		return fmt.Sprintf("binlog_format is %s: SET GLOBAL binlog_format = 'ROW', and binlog_format = ROW in the configuration file", st.format)
	case !strings.EqualFold(st.rowImage, "FULL"):
		return fmt.Sprintf("binlog_row_image is %s: SET GLOBAL binlog_row_image = 'FULL', and binlog_row_image = FULL in the configuration file", st.rowImage)
	case len(missing) > 0:
		return fmt.Sprintf("the user lacks %s: GRANT REPLICATION SLAVE, REPLICATION CLIENT ON *.* TO <user>", strings.Join(missing, " and "))
	}
	return ""
}

// replicationGrants reads SHOW GRANTS lines: whether the user has
// REPLICATION SLAVE and REPLICATION CLIENT (MariaDB 10.5 and later show
// the latter as BINLOG MONITOR) on *.*, alone or with ALL PRIVILEGES.
func replicationGrants(lines []string) (slave, client bool) {
	for _, l := range lines {
		up := strings.ToUpper(l)
		i := strings.Index(up, " ON *.* TO ")
		if !strings.HasPrefix(up, "GRANT ") || i < 0 {
			continue
		}
		for _, p := range strings.Split(up[len("GRANT "):i], ",") {
			switch strings.TrimSpace(p) {
			case "ALL PRIVILEGES", "ALL":
				slave, client = true, true
			case "REPLICATION SLAVE", "REPLICATION REPLICA":
				slave = true
			case "REPLICATION CLIENT", "BINLOG MONITOR":
				client = true
			}
		}
	}
	return slave, client
}

// readServerState reads the server's binlog settings and the user's
// grants.
func readServerState(ctx context.Context, db *sql.DB) (serverState, error) {
	var st serverState
	var logBin int
	if err := db.QueryRowContext(ctx, "SELECT @@GLOBAL.log_bin, @@GLOBAL.binlog_format, @@GLOBAL.binlog_row_image").
		Scan(&logBin, &st.format, &st.rowImage); err != nil {
		return st, fmt.Errorf("read binlog settings: %w", err)
	}
	st.logBin = logBin != 0
	rows, err := db.QueryContext(ctx, "SHOW GRANTS FOR CURRENT_USER()")
	if err != nil {
		return st, fmt.Errorf("read grants: %w", err)
	}
	defer rows.Close()
	var lines []string
	for rows.Next() {
		var l string
		if err := rows.Scan(&l); err != nil {
			return st, fmt.Errorf("read grants: %w", err)
		}
		lines = append(lines, l)
	}
	if err := rows.Err(); err != nil {
		return st, fmt.Errorf("read grants: %w", err)
	}
	st.replSlave, st.replCli = replicationGrants(lines)
	return st, nil
}

// defaultServerID is the replica server id of connector name's table:
// 0x5C000000 plus 24 bits of a hash, far from the small ids servers are
// usually given.
func defaultServerID(name, table string) uint32 {
	h := fnv.New32a()
	h.Write([]byte(name + "\x00" + table))
	return 0x5C000000 | h.Sum32()&0x00FFFFFF
}

// chooseMode applies the changes setting: binlog when asked (failing
// when the server does not allow it), binlog or poll for auto.
func (s *Source) chooseMode(ctx context.Context, st *Settings, name string, cfg *mysql.Config, version string, fields []string) error {
	if st.Changes == ChangesPoll {
		return nil
	}
	ss, err := readServerState(ctx, s.db)
	if err != nil {
		return fmt.Errorf("changes: check the binlog: %w", err)
	}
	if reason := binlogBlocker(s.tbl.name, s.tbl.view, ss); reason != "" {
		if st.Changes == ChangesBinlog {
			// The server answered and does not allow what the settings
			// ask: a problem of the configuration (syncd validate).
			return connector.SchemaError(fmt.Errorf("changes: binlog: %s", reason))
		}
		s.binlogNote = "changes: auto polls: " + reason
		s.log.WithField(logfield.Reason, reason).Warn("binlog not available; polling instead")
		return nil
	}
	b := &binlogState{flavor: flavorMySQL, serverID: st.ServerID, settings: st, fields: fields,
		addr: cfg.Addr, user: cfg.User, password: cfg.Passwd, tls: cfg.TLS}
	if strings.Contains(version, "MariaDB") {
		b.flavor = flavorMariaDB
	}
	if b.serverID == 0 {
		b.serverID = defaultServerID(name, s.tbl.name)
	}
	b.schema, b.name = s.tbl.schema, s.tbl.relName
	s.binlog = b
	return nil
}

// Mode describes how changes are read, for logs and status pages.
func (s *Source) Mode() string {
	if s.binlog == nil {
		return "poll"
	}
	return "binlog"
}
