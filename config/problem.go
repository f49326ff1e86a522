package config

import (
	"fmt"

	"github.com/syncd-io/syncd/mapping"
)

// Problem is one problem of a configuration: where (a path such as
// "connectors[crm].mapping.fields.firstName"), what, and how to fix it.
type Problem = mapping.Problem

// ValidationError lists every problem of a configuration.
type ValidationError struct {
	Problems []Problem
}

// Error returns one problem per line.
func (e *ValidationError) Error() string {
	return (&mapping.SpecError{Problems: e.Problems}).Error()
}

// problems collects problems.
type problems []Problem

func (ps *problems) add(path, hint, format string, args ...any) {
	*ps = append(*ps, Problem{Path: path, Message: fmt.Sprintf(format, args...), Hint: hint})
}

// err returns the problems as a *ValidationError, or nil.
func (ps problems) err() error {
	if len(ps) == 0 {
		return nil
	}
	return &ValidationError{Problems: ps}
}

// join returns a path's child: "a" + "b" is "a.b".
func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// connectorPath is how problems name a connector: by name when it has
// one, else by position.
func connectorPath(i int, name string) string {
	if name != "" {
		return "connectors[" + name + "]"
	}
	return fmt.Sprintf("connectors[%d]", i)
}
