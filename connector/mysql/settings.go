package mysql

import (
	"errors"
	"fmt"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/syncd-io/syncd/connector"
	"github.com/syncd-io/syncd/connector/sqlkit"
)

// Settings are the `settings:` of a mysql connector. They are named as
// the postgres connector's where they mean the same.
type Settings struct {
	// DSN is the connection string in github.com/go-sql-driver/mysql's
	// format, user:pass@tcp(host:3306)/db. A secret.
	DSN connector.Secret `yaml:"dsn"`
	// Table is a table or view, `db.table` or a table of the dsn's
	// database.
	Table string `yaml:"table"`
	// IDColumn is the primary key column (an integer, AUTO_INCREMENT for
	// creates on MySQL, or text).
	IDColumn string `yaml:"idColumn"`
	// UpdatedAtColumn is the change cursor: a column every change moves
	// forward, usually TIMESTAMP(6) ... ON UPDATE CURRENT_TIMESTAMP(6).
	UpdatedAtColumn string `yaml:"updatedAtColumn"`
	// DeletedAtColumn, optional, marks soft-deleted rows: a TIMESTAMP or
	// DATETIME (deleted when set) or a tinyint(1) (deleted when not 0).
	DeletedAtColumn string `yaml:"deletedAtColumn"`
	// BatchSize is the number of rows per batch.
	BatchSize int `yaml:"batchSize"`
	// Columns limits the columns read and listed; empty means all.
	Columns []string `yaml:"columns"`
	// Lookback is how far behind the server's clock checkpoints stay.
	// Unset means one minute for time cursors and 0 for others.
	Lookback *time.Duration `yaml:"lookback"`
	// TimeZone is the zone the table's DATETIME values (which carry
	// none) are written in: an IANA name such as Europe/Berlin, or an
	// offset such as +09:00. syncd's writes run in a session of this
	// zone, so that DEFAULT and ON UPDATE CURRENT_TIMESTAMP stamp them as
	// the application's sessions do. TIMESTAMP values are instants and
	// need none. Unset means the server's global time_zone, read when
	// the connector opens.
	TimeZone string `yaml:"timeZone"`
	// Changes is how changes are read: poll (the keyset reads of
	// changes.go), binlog (the server's binary log, see binlog.go) or
	// auto (binlog when the server allows it, else poll); empty means
	// DefaultChanges (auto).
	Changes string `yaml:"changes"`
	// ServerID is the replica server id syncd reads the binlog under;
	// 0 means one derived from the connector's name and table. It must
	// differ from every other replica's of the server.
	ServerID uint32 `yaml:"serverId"`
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
	return fmt.Sprintf("mysql table %s (dsn redacted)", s.Table)
}

// Validate checks the settings without connecting.
func (s *Settings) Validate() []error {
	var errs []error
	if s.DSN == "" {
		errs = append(errs, errors.New("dsn: required"))
	} else if _, err := mysql.ParseDSN(s.DSN.Reveal()); err != nil {
		errs = append(errs, fmt.Errorf("dsn: %w (the form is user:pass@tcp(host:3306)/db)", sqlkit.NewRedactor(s.DSN.Reveal()).Redact(err)))
	}
	if _, err := s.location(); err != nil {
		errs = append(errs, err)
	}
	errs = append(errs, s.validateBinlog()...)
	return append(errs, s.names().Check(MaxBatchSize)...)
}

// names are the settings sqlkit checks and resolves, shared with the
// postgres connector.
func (s *Settings) names() sqlkit.Names {
	return sqlkit.Names{Table: s.Table, IDColumn: s.IDColumn, UpdatedAtColumn: s.UpdatedAtColumn,
		DeletedAtColumn: s.DeletedAtColumn, Columns: s.Columns, BatchSize: s.BatchSize, Lookback: s.Lookback}
}

// location is the zone of DATETIME values the timeZone setting names,
// nil when unset (the server's global zone).
func (s *Settings) location() (*time.Location, error) {
	if s.TimeZone == "" {
		return nil, nil
	}
	if loc, ok := parseOffset(s.TimeZone); ok {
		return loc, nil
	}
	loc, err := time.LoadLocation(s.TimeZone)
	if err == nil && s.TimeZone == "Local" {
		err = errors.New("the machine's zone is not the server's")
	}
	if err != nil {
		return nil, fmt.Errorf("timeZone: %q is not a time zone (an IANA name such as Europe/Berlin, an offset such as +09:00, or unset for the server's): %w", s.TimeZone, err)
	}
	return loc, nil
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
