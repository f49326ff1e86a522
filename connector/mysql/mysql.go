// Package mysql is the connector for MySQL and MariaDB tables and views,
// on github.com/go-sql-driver/mysql. It is incremental and writable, and
// shares its paging, column picking and write loop with the postgres
// connector through connector/sqlkit.
//
// Changes reads rows in keyset order on (updatedAtColumn, idColumn):
//
//	WHERE u > ? OR (u = ? AND id > ?) ORDER BY u, id LIMIT n
//
// so rows sharing one updated_at are never skipped or repeated, whatever
// the batch size. Cursor values travel as text at full precision
// (microseconds for TIMESTAMP(6)/DATETIME(6)); integer ids compare as
// integers. A lookback (default one minute for time cursors) keeps
// checkpoints behind the server's clock so that a transaction committing
// late is read by the next run.
//
// Reads run in a session at +00:00: TIMESTAMP values (stored in UTC) are
// read and compared in UTC. DATETIME values carry no zone: they are read
// and written in the timeZone setting, by default the server's global
// time_zone, and writes run in a session of that zone (zone.go), so that
// what DEFAULT and ON UPDATE CURRENT_TIMESTAMP stamp for syncd is in the
// zone the application's sessions stamp in. tinyint(1) columns are
// booleans. A zero date (0000-00-00) in a record's column makes that
// record Invalid (a dead letter naming the column), not the read fail.
//
// With deletedAtColumn, rows whose column is set (a time) or not 0 (a
// tinyint(1)) come from Changes as Deleted records, provided whatever
// deletes them also moves updatedAtColumn (ON UPDATE CURRENT_TIMESTAMP
// does), and never from Snapshot. Hard deletes are found by a resync.
//
// Write applies each change in its own statement (several in one
// transaction, each alone when that fails): UPDATE of the given columns
// only, INSERT, DELETE or, for soft deletes, setting deletedAtColumn.
// A create learns the new row's id from INSERT ... RETURNING on MariaDB
// (10.5 and later) and from LAST_INSERT_ID() for an AUTO_INCREMENT id on
// MySQL, which has no RETURNING; on MySQL a table whose id is not
// AUTO_INCREMENT takes creates only when the change carries the id.
//
// The dsn is a secret: it appears in no log and no error.
package mysql

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/go-sql-driver/mysql"
	"github.com/sirupsen/logrus"

	"github.com/syncd-io/syncd/connector"
	"github.com/syncd-io/syncd/connector/sqlkit"
	"github.com/syncd-io/syncd/internal/logfield"
)

// TypeName is the connector's `type:` in the configuration.
const TypeName = "mysql"

func init() {
	connector.Register(connector.Type{
		Name:          TypeName,
		NewSettings:   func() connector.Settings { return NewSettings() },
		Open:          Open,
		Writable:      true,
		Incremental:   true,
		SoftDelete:    true,
		StagesCreates: true,
		Capabilities:  []connector.Capability{connector.CapGet, connector.CapCount, connector.CapFields, connector.CapNotify, connector.CapActivities, connector.CapPollTable},
		ActivityTable: true,
	})
}

var (
	_ connector.Source      = (*Source)(nil)
	_ connector.Writer      = (*Source)(nil)
	_ connector.FieldLister = (*Source)(nil)
)

// errClosed is returned by the calls of a closed source.
var errClosed = errors.New("mysql source is closed")

// Source reads and writes one table or view.
type Source struct {
	// db reads, in a session at +00:00; wdb writes, in a session of the
	// DATETIME values' zone (db itself when that is +00:00 or the table
	// has no DATETIME or DATE column).
	db, wdb   *sql.DB
	zone      zone
	zoneNote  string
	ahead     aheadCheckpoint
	tbl       *table
	q         queries
	batchSize int
	// returning is true on servers with INSERT ... RETURNING (MariaDB).
	returning bool
	red       *sqlkit.Redactor
	log       *logrus.Entry
	guard     sqlkit.Guard
	// binlog is set when changes come from the binlog (binlog.go).
	binlog *binlogState
	// binlogNote says why changes: auto polls (empty otherwise).
	binlogNote string
	// acts writes activities to the activities table (activities.go).
	acts *sqlkit.Activities
}

// Close closes the connections.
func (s *Source) Close() error {
	if s.guard.Close() {
		if s.wdb != s.db {
			_ = s.wdb.Close()
		}
		return s.db.Close()
	}
	return nil
}

// usable is the error of a call on a done context or a closed source.
func (s *Source) usable(ctx context.Context) error { return s.guard.Usable(ctx) }

// Open connects to the server and reads the table's columns from
// information_schema.
func Open(ctx context.Context, opts connector.Options) (connector.Source, error) {
	s, log, err := connector.Prepare[*Settings](opts, TypeName)
	if err != nil {
		return nil, err
	}
	red := sqlkit.NewRedactor(s.DSN.Reveal())
	cfg, err := mysql.ParseDSN(s.DSN.Reveal())
	if err != nil {
		return nil, fmt.Errorf("open mysql connector %s: dsn: %w", opts.Name, red.Redact(err))
	}
	red.Add(cfg.Passwd)
	given, _ := s.location()
	// Values are parsed here, in the zones the settings give, and
	// UPDATE reports the rows it matched, not only those it changed.
	cfg.ParseTime = false
	cfg.ClientFoundRows = true
	cfg.InterpolateParams = true
	if cfg.Params == nil {
		cfg.Params = map[string]string{}
	}
	cfg.Params["time_zone"] = "'+00:00'"
	conn, err := mysql.NewConnector(cfg)
	if err != nil {
		return nil, fmt.Errorf("open mysql connector %s: dsn: %w", opts.Name, red.Redact(err))
	}
	db := sql.OpenDB(conn)
	fail := func(err error) (connector.Source, error) {
		_ = db.Close()
		return nil, fmt.Errorf("open mysql connector %s: %w", opts.Name, red.Redact(err))
	}
	var version string
	if err := db.QueryRowContext(ctx, "SELECT VERSION()").Scan(&version); err != nil {
		return fail(fmt.Errorf("connect: %w", err))
	}
	z, err := resolveZone(ctx, db, given)
	if err != nil {
		return fail(err)
	}
	tbl, err := loadTable(ctx, db, s, cfg.DBName, z.loc, opts.Fields)
	if err != nil {
		return fail(connector.SchemaError(err))
	}
	wdb, err := openWriter(cfg, z, tbl)
	if err != nil {
		return fail(err)
	}
	if wdb == nil {
		wdb = db
	}
	src := &Source{
		guard:     sqlkit.Guard{Closed: errClosed},
		db:        db,
		wdb:       wdb,
		zone:      z,
		tbl:       tbl,
		q:         buildQueries(tbl),
		batchSize: s.BatchSize,
		returning: hasReturning(version),
		red:       red,
		log:       log.WithField(logfield.Table, tbl.name),
	}
	src.acts = sqlkit.NewActivities(activityDialect(db, red), opts.ActivityTable)
	if err := src.checkZone(ctx); err != nil {
		_ = src.Close()
		return nil, fmt.Errorf("open mysql connector %s: %w", opts.Name, red.Redact(err))
	}
	mode := s
	if opts.Inspect {
		// A look at the table reads it as polling does.
		poll := *s
		poll.Changes = ChangesPoll
		mode = &poll
	}
	if err := src.chooseMode(ctx, mode, opts.Name, cfg, version, opts.Fields); err != nil {
		_ = src.Close()
		return nil, fmt.Errorf("open mysql connector %s: %w", opts.Name, red.Redact(err))
	}
	return src, nil
}

// openWriter opens the pool writes run on when their session must be in
// another zone than the reads' +00:00: the table has DATETIME or DATE
// columns, which DEFAULT and ON UPDATE CURRENT_TIMESTAMP, or a trigger's
// NOW(), fill in the session's zone. It returns nil when the read pool
// will do.
func openWriter(cfg *mysql.Config, z zone, t *table) (*sql.DB, error) {
	if z.utc() || !t.hasLocalTimes() {
		return nil, nil
	}
	wcfg := cfg.Clone()
	lifetime, err := z.sessionParams(wcfg)
	if err != nil {
		return nil, fmt.Errorf("write session time zone: %w", err)
	}
	conn, err := mysql.NewConnector(wcfg)
	if err != nil {
		return nil, fmt.Errorf("dsn: %w", err)
	}
	wdb := sql.OpenDB(conn)
	if lifetime > 0 {
		wdb.SetConnMaxLifetime(lifetime)
	}
	return wdb, nil
}

// ModeNote says why changes: auto polls, with what to change, and, when
// the table has DATETIME columns the connector reads (they carry no
// zone), which zone it takes them in, and whether that zone looks wrong:
// `syncd validate` shows it, since a wrong zone shifts every such time
// and can make the checkpoint pass over edits.
func (s *Source) ModeNote() string {
	var notes []string
	for _, n := range []string{s.binlogNote, s.zoneNote} {
		if n != "" {
			notes = append(notes, n)
		}
	}
	return strings.Join(notes, "; ")
}

// hasReturning reports whether a server of this VERSION() has INSERT ...
// RETURNING: MariaDB from 10.5; no MySQL release.
func hasReturning(version string) bool {
	if !strings.Contains(version, "MariaDB") {
		return false
	}
	var major, minor int
	if _, err := fmt.Sscanf(version, "%d.%d", &major, &minor); err != nil {
		return false
	}
	return major > 10 || (major == 10 && minor >= 5)
}
