package sqlkit

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Names are the settings naming a table's columns, as both SQL
// connectors spell them.
type Names struct {
	Table           string
	IDColumn        string
	UpdatedAtColumn string
	DeletedAtColumn string
	Columns         []string
	BatchSize       int
	Lookback        *time.Duration
}

// Check checks the names without connecting, every problem at once,
// each naming its setting; maxBatch bounds batchSize.
func (n Names) Check(maxBatch int) []error {
	var errs []error
	if strings.TrimSpace(n.Table) == "" {
		errs = append(errs, errors.New("table: required"))
	}
	if n.IDColumn == "" {
		errs = append(errs, errors.New("idColumn: required"))
	}
	if n.UpdatedAtColumn == "" {
		errs = append(errs, errors.New("updatedAtColumn: required"))
	}
	if n.IDColumn != "" && n.IDColumn == n.UpdatedAtColumn {
		errs = append(errs, errors.New("updatedAtColumn: must differ from idColumn"))
	}
	if n.DeletedAtColumn != "" && (n.DeletedAtColumn == n.IDColumn || n.DeletedAtColumn == n.UpdatedAtColumn) {
		errs = append(errs, errors.New("deletedAtColumn: must differ from idColumn and updatedAtColumn"))
	}
	if n.BatchSize < 1 || n.BatchSize > maxBatch {
		errs = append(errs, fmt.Errorf("batchSize: %d not between 1 and %d", n.BatchSize, maxBatch))
	}
	seen := map[string]bool{}
	for _, c := range n.Columns {
		if c == "" {
			errs = append(errs, errors.New("columns: empty column name"))
		} else if seen[c] {
			errs = append(errs, fmt.Errorf("columns: %q listed twice", c))
		}
		seen[c] = true
	}
	if n.Lookback != nil && *n.Lookback < 0 {
		errs = append(errs, fmt.Errorf("lookback: %v is negative", *n.Lookback))
	}
	return errs
}

// Column is what sqlkit asks of a dialect's column.
type Column interface {
	// Name is the column's name, as in the catalog.
	Name() string
	// HoldsTime reports whether the column holds times (a lookback
	// needs a time cursor).
	HoldsTime() bool
	// Type names the column's type in messages.
	Type() string
}

// Catalog is a table's columns as a dialect read them.
type Catalog[C Column] struct {
	// Table names the table in errors.
	Table string
	// Find returns the column a setting names, as the server resolves
	// names.
	Find func(name string) (C, bool)
	// All are the table's columns in order.
	All []C
}

// Picked are the columns the settings and the mapping choose.
type Picked[C any] struct {
	ID, Updated C
	Deleted     *C
	// Fetch are the columns records carry.
	Fetch []C
	// Listed are the names Fields returns.
	Listed []string
	// Lookback is how far behind the server's clock checkpoints stay.
	Lookback time.Duration
}

// Pick resolves the names in the catalog. fields, when given, are the
// columns records must carry (the mapping's fields); lookback is the
// default lookback of a time cursor.
func Pick[C Column](cat Catalog[C], n Names, lookback time.Duration, fields []string) (Picked[C], []error) {
	var (
		p    Picked[C]
		errs []error
		ok   bool
		err  error
	)
	if p.ID, ok = cat.Find(n.IDColumn); !ok {
		errs = append(errs, fmt.Errorf("idColumn: no column %q in %s", n.IDColumn, cat.Table))
	}
	if p.Updated, ok = cat.Find(n.UpdatedAtColumn); !ok {
		errs = append(errs, fmt.Errorf("updatedAtColumn: no column %q in %s", n.UpdatedAtColumn, cat.Table))
	}
	if n.DeletedAtColumn != "" {
		if c, ok := cat.Find(n.DeletedAtColumn); ok {
			p.Deleted = &c
		} else {
			errs = append(errs, fmt.Errorf("deletedAtColumn: no column %q in %s", n.DeletedAtColumn, cat.Table))
		}
	}
	if len(n.Columns) > 0 {
		for _, name := range n.Columns {
			c, ok := cat.Find(name)
			if !ok {
				errs = append(errs, fmt.Errorf("columns: no column %q in %s", name, cat.Table))
				continue
			}
			p.Listed = append(p.Listed, c.Name())
			p.Fetch = append(p.Fetch, c)
		}
	} else {
		for _, c := range cat.All {
			p.Listed = append(p.Listed, c.Name())
		}
		p.Fetch = cat.All
	}
	if len(fields) > 0 {
		p.Fetch = nil
		var seen []string
		for _, name := range fields {
			if slices.Contains(seen, name) {
				continue
			}
			seen = append(seen, name)
			c, ok := cat.Find(name)
			if !ok || (len(n.Columns) > 0 && !slices.Contains(p.Listed, c.Name())) {
				errs = append(errs, fmt.Errorf("mapped field %q is not a column of %s", name, cat.Table))
				continue
			}
			p.Fetch = append(p.Fetch, c)
		}
	}
	if p.Lookback, err = Lookback(n.Lookback, lookback, p.Updated.HoldsTime(), p.Updated.Name(), p.Updated.Type()); err != nil {
		errs = append(errs, err)
	}
	return p, errs
}

// Lookback is the lookback of a cursor column: the setting, or def for a
// time cursor when unset; a lookback on a cursor that is not a time is an
// error naming the column and its type.
func Lookback(setting *time.Duration, def time.Duration, isTime bool, column, typ string) (time.Duration, error) {
	switch {
	case setting == nil && isTime:
		return def, nil
	case setting != nil && *setting > 0 && !isTime && column != "":
		return 0, fmt.Errorf("lookback: column %s is of type %s, not a timestamp; set lookback to 0", column, typ)
	case setting != nil:
		return *setting, nil
	}
	return 0, nil
}
