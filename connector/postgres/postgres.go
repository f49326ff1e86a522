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
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/sirupsen/logrus"

	"github.com/syncd-io/syncd/connector"
)

// TypeName is the connector's `type:` in the configuration.
const TypeName = "postgres"

// Defaults of the settings.
const (
	DefaultIDColumn        = "id"
	DefaultUpdatedAtColumn = "updated_at"
	DefaultBatchSize       = 500
	DefaultLookback        = time.Minute
	// MaxBatchSize bounds batchSize.
	MaxBatchSize = 10000
)

func init() {
	connector.Register(connector.Type{
		Name:         TypeName,
		NewSettings:  func() connector.Settings { return NewSettings() },
		Open:         Open,
		Writable:     true,
		Incremental:  true,
		SoftDelete:   true,
		Capabilities: []connector.Capability{connector.CapGet, connector.CapCount, connector.CapFields},
	})
}

// Settings are the `settings:` of a postgres connector.
type Settings struct {
	// DSN is the connection string (URL or key=value). A secret.
	DSN string `yaml:"dsn"`
	// Table is a table or view, optionally schema-qualified, named as in
	// SQL (unquoted names fold to lower case; "Quoted" ones keep theirs).
	Table string `yaml:"table"`
	// IDColumn is the primary key column.
	IDColumn string `yaml:"idColumn"`
	// UpdatedAtColumn is the change cursor: a column every change moves
	// forward, usually a timestamp set by a default and a trigger.
	UpdatedAtColumn string `yaml:"updatedAtColumn"`
	// DeletedAtColumn, optional, marks soft-deleted rows: a timestamp
	// (deleted when set) or a boolean (deleted when true).
	DeletedAtColumn string `yaml:"deletedAtColumn"`
	// BatchSize is the number of rows per batch.
	BatchSize int `yaml:"batchSize"`
	// Columns limits the columns read and listed; empty means all.
	Columns []string `yaml:"columns"`
	// Lookback is how far behind the server's clock checkpoints stay (see
	// the package comment). Unset means one minute for timestamp cursors
	// and 0 for other types, which cannot have one.
	Lookback *time.Duration `yaml:"lookback"`
}

// NewSettings returns settings holding the defaults.
func NewSettings() *Settings {
	return &Settings{
		IDColumn:        DefaultIDColumn,
		UpdatedAtColumn: DefaultUpdatedAtColumn,
		BatchSize:       DefaultBatchSize,
	}
}

// String describes the settings without the dsn.
func (s Settings) String() string {
	return fmt.Sprintf("postgres table %s (dsn redacted)", s.Table)
}

// Validate checks the settings without connecting.
func (s *Settings) Validate() []error {
	var errs []error
	if s.DSN == "" {
		errs = append(errs, errors.New("dsn: required"))
	} else if _, err := pgxpool.ParseConfig(s.DSN); err != nil {
		errs = append(errs, fmt.Errorf("dsn: %w", newRedactor(s.DSN).redact(err)))
	}
	if strings.TrimSpace(s.Table) == "" {
		errs = append(errs, errors.New("table: required"))
	}
	if s.IDColumn == "" {
		errs = append(errs, errors.New("idColumn: required"))
	}
	if s.UpdatedAtColumn == "" {
		errs = append(errs, errors.New("updatedAtColumn: required"))
	}
	if s.IDColumn != "" && s.IDColumn == s.UpdatedAtColumn {
		errs = append(errs, errors.New("updatedAtColumn: must differ from idColumn"))
	}
	if s.DeletedAtColumn != "" && (s.DeletedAtColumn == s.IDColumn || s.DeletedAtColumn == s.UpdatedAtColumn) {
		errs = append(errs, errors.New("deletedAtColumn: must differ from idColumn and updatedAtColumn"))
	}
	if s.BatchSize < 1 || s.BatchSize > MaxBatchSize {
		errs = append(errs, fmt.Errorf("batchSize: %d not between 1 and %d", s.BatchSize, MaxBatchSize))
	}
	seen := map[string]bool{}
	for _, c := range s.Columns {
		if c == "" {
			errs = append(errs, errors.New("columns: empty column name"))
		} else if seen[c] {
			errs = append(errs, fmt.Errorf("columns: %q listed twice", c))
		}
		seen[c] = true
	}
	if s.Lookback != nil && *s.Lookback < 0 {
		errs = append(errs, fmt.Errorf("lookback: %v is negative", *s.Lookback))
	}
	return errs
}

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
	return &Source{
		pool:      pool,
		tbl:       tbl,
		q:         buildQueries(tbl),
		batchSize: s.BatchSize,
		red:       red,
		log:       log.WithField("table", tbl.name),
	}, nil
}
