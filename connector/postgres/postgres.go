// Package postgres is the connector for PostgreSQL tables and views, on
// github.com/jackc/pgx/v5. It is incremental and writable.
//
// Changes reads rows in keyset order on (updatedAtColumn, idColumn):
//
//	WHERE (updated_at, id) > ($u, $id) ORDER BY updated_at, id LIMIT n
//
// so rows sharing one updated_at are never skipped or repeated, whatever
// the batch size. Both values are compared in the columns' own types
// (numeric ids order numerically). The checkpoint holds them as text, at
// full precision.
//
// A timestamp cursor cannot see a transaction that commits after a read
// with an updated_at older than what the read saw (PostgreSQL's now() is
// the time a transaction began). The lookback setting (default one
// minute for timestamp cursors) guards against it: a checkpoint never
// moves past the server's clock minus lookback, so rows changed in the
// last minute are read again by the next run (the reconciler's hash
// check makes the overlap free) and a late commit shorter than lookback
// is never lost. Set lookback to 0 for an exact cursor.
//
// With deletedAtColumn, rows whose column is set (a timestamp) or true (a
// boolean) come from Changes as Deleted records, provided whatever
// deletes them also moves updatedAtColumn, and never from Snapshot.
//
// Write applies each change in its own statement and transaction, so one
// failing change never undoes another: UPDATE of the given columns only,
// INSERT ... RETURNING id, DELETE or, for soft deletes, setting
// deletedAtColumn. Values are sent as text and cast to each column's
// type. Write never sets updatedAtColumn: the table's triggers or
// defaults may, and the forward read of such an echo costs nothing, as
// the reconciler recognises its own values by their hash.
//
// The dsn is a secret: it appears in no log and no error.
package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/sirupsen/logrus"

	"github.com/syncd-io/syncd/connector"
	"github.com/syncd-io/syncd/connector/sqlkit"
	"github.com/syncd-io/syncd/internal/logfield"
)

// TypeName is the connector's `type:` in the configuration.
const TypeName = "postgres"

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
var errClosed = errors.New("postgres source is closed")

// Source reads and writes one table or view.
type Source struct {
	pool      *pgxpool.Pool
	tbl       *table
	q         queries
	batchSize int
	red       *redactor
	log       *logrus.Entry
	guard     sqlkit.Guard
	// logical is set when changes come from logical replication.
	logical *logicalState
	// modeNote says why auto mode polls (empty otherwise).
	modeNote string
	// acts writes activities to the activities table (activities.go).
	acts *sqlkit.Activities
}

// Close closes the connections.
func (s *Source) Close() error {
	if s.guard.Close() {
		s.pool.Close()
	}
	return nil
}

func (s *Source) usable(ctx context.Context) error { return s.guard.Usable(ctx) }

// Open connects to the server and reads the table's columns from the
// catalog.
func Open(ctx context.Context, opts connector.Options) (connector.Source, error) {
	s, ok := opts.Settings.(*Settings)
	if !ok || s == nil {
		return nil, fmt.Errorf("open postgres connector %s: settings of type %T", opts.Name, opts.Settings)
	}
	if errs := s.Validate(); len(errs) > 0 {
		return nil, fmt.Errorf("open postgres connector %s: %w", opts.Name, errors.Join(errs...))
	}
	red := newRedactor(s.DSN)
	cfg, err := pgxpool.ParseConfig(s.DSN)
	if err != nil {
		return nil, fmt.Errorf("open postgres connector %s: dsn: %w", opts.Name, red.redact(err))
	}
	red.add(cfg.ConnConfig.Password)
	// Cursor values travel as text: fix the formats they take.
	cfg.ConnConfig.RuntimeParams["DateStyle"] = "ISO, MDY"
	cfg.ConnConfig.RuntimeParams["TimeZone"] = "UTC"
	// Floats in their shortest exact text, in the stream's sessions and
	// the reads' alike (kindFloat4 reads a real through its text).
	cfg.ConnConfig.RuntimeParams["extra_float_digits"] = "1"
	if cfg.ConnConfig.RuntimeParams["application_name"] == "" {
		cfg.ConnConfig.RuntimeParams["application_name"] = "syncd"
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("open postgres connector %s: %w", opts.Name, red.redact(err))
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("open postgres connector %s: connect: %w", opts.Name, red.redact(err))
	}
	tbl, err := loadTable(ctx, pool, s, opts.Fields)
	if err != nil {
		pool.Close()
		return nil, fmt.Errorf("open postgres connector %s: %w", opts.Name, red.redact(err))
	}
	log := opts.Log
	if log == nil {
		log = logrus.NewEntry(logrus.StandardLogger())
	}
	src := &Source{
		guard:     sqlkit.Guard{Closed: errClosed},
		pool:      pool,
		tbl:       tbl,
		q:         buildQueries(tbl),
		batchSize: s.BatchSize,
		red:       red,
		log:       log.WithField(logfield.Table, tbl.name),
	}
	src.acts = sqlkit.NewActivities(activityDialect(pool, red), opts.ActivityTable)
	mode := s
	if opts.Inspect {
		// A look at the table creates no slot nor publication.
		poll := *s
		poll.Changes = ChangesPoll
		mode = &poll
	}
	if err := src.chooseMode(ctx, mode, opts.Name); err != nil {
		pool.Close()
		return nil, fmt.Errorf("open postgres connector %s: %w", opts.Name, red.redact(err))
	}
	return src, nil
}
