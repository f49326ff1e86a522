package postgres

import (
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/syncd-io/syncd/connector/sqlkit"
)

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
	// Changes is how changes are read: poll (the keyset reads of
	// changes.go), logical (the server's logical replication stream, see
	// logical.go) or auto (logical when the server allows it, else poll);
	// empty means DefaultChanges (auto).
	Changes string `yaml:"changes"`
	// Slot is the logical replication slot; empty means syncd_<connector
	// name>. It always contains "syncd".
	Slot string `yaml:"slot"`
	// Publication names a publication of the table that a DBA created;
	// empty means syncd creates one named like the slot.
	Publication string `yaml:"publication"`
}

// NewSettings returns settings holding the defaults.
func NewSettings() *Settings {
	return &Settings{
		IDColumn:        DefaultIDColumn,
		UpdatedAtColumn: DefaultUpdatedAtColumn,
		BatchSize:       DefaultBatchSize,
		Changes:         DefaultChanges,
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
	errs = append(errs, s.names().Check(MaxBatchSize)...)
	return append(errs, s.validateLogical()...)
}

// names are the settings sqlkit checks and resolves.
func (s *Settings) names() sqlkit.Names {
	return sqlkit.Names{
		Table: s.Table, IDColumn: s.IDColumn, UpdatedAtColumn: s.UpdatedAtColumn, DeletedAtColumn: s.DeletedAtColumn,
		Columns: s.Columns, BatchSize: s.BatchSize, Lookback: s.Lookback,
	}
}

// Defaults of the settings.
const (
	DefaultIDColumn        = "id"
	DefaultUpdatedAtColumn = "updated_at"
	DefaultBatchSize       = 500
	DefaultLookback        = time.Minute
	// MaxBatchSize bounds batchSize.
	MaxBatchSize = 10000
)
