package config

import (
	"context"
	"errors"
	"fmt"

	"github.com/syncd-io/syncd/connector"
)

// Two connector types for the tests: a read-only one shaped like csv and
// a writable one with secrets among its settings, like postgres.

type fileSettings struct {
	Path      string `yaml:"path"`
	Delimiter string `yaml:"delimiter"`
}

func (s *fileSettings) Validate() []error {
	var errs []error
	if s.Path == "" {
		errs = append(errs, errors.New("path: required"))
	}
	if len([]rune(s.Delimiter)) != 1 {
		errs = append(errs, fmt.Errorf("delimiter: must be one character, not %q", s.Delimiter))
	}
	return errs
}

type dbSettings struct {
	DSN       string   `yaml:"dsn"`
	Token     string   `yaml:"token"`
	Table     string   `yaml:"table"`
	BatchSize int      `yaml:"batchSize"`
	Columns   []string `yaml:"columns"`
	Lookback  *string  `yaml:"lookback"`
}

func (s *dbSettings) Validate() []error {
	if s.Table == "" {
		return []error{errors.New("table: required")}
	}
	return nil
}

func openFake(context.Context, connector.Options) (connector.Source, error) {
	return nil, errors.New("not openable in config tests")
}

func init() {
	connector.Register(connector.Type{
		Name:        "filetest",
		NewSettings: func() connector.Settings { return &fileSettings{Delimiter: ","} },
		Open:        openFake,
	})
	connector.Register(connector.Type{
		Name:        "dbtest",
		NewSettings: func() connector.Settings { return &dbSettings{BatchSize: 500} },
		Open:        openFake,
		Writable:    true,
		Incremental: true,
	})
	connector.Register(connector.Type{
		Name:         "crmtest",
		NewSettings:  func() connector.Settings { return &dbSettings{BatchSize: 500} },
		Open:         openFake,
		Writable:     true,
		Incremental:  true,
		Capabilities: []connector.Capability{connector.CapActivities},
	})
	connector.Register(connector.Type{
		Name:          "sqltest",
		NewSettings:   func() connector.Settings { return &dbSettings{BatchSize: 500} },
		Open:          openFake,
		Writable:      true,
		Incremental:   true,
		ActivityTable: true,
		Capabilities:  []connector.Capability{connector.CapActivities},
	})
}
