package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/syncd-io/syncd/config"
	"github.com/syncd-io/syncd/connector/sqlkit"
	"github.com/syncd-io/syncd/mapping"
	"github.com/syncd-io/syncd/policy"
)

// idColumnChecker is a table's source (postgres, mysql) that says what
// its catalog holds of the id column: unique, filled on insert.
type idColumnChecker interface {
	IDColumnCheck(ctx context.Context) (*sqlkit.IDColumn, error)
}

// idColumnProblems refuses an id column that is not unique, and, with
// onWorkspaceCreate: create, one the server cannot fill (unless the
// mapping writes it back itself): each would otherwise show only once
// syncd runs (contacts sharing a row, a dead letter per contact created
// in the app).
func idColumnProblems(cc config.ConnectorConfig, m *mapping.Mapper, id *sqlkit.IDColumn) []string {
	if id == nil {
		return nil
	}
	back := map[string]bool{}
	for _, k := range m.ReverseTargets() {
		back["fields."+k] = true
	}
	written := false
	for _, fs := range m.FieldSources() {
		if back[fs.Path] && strings.EqualFold(fs.Field, id.Column) {
			written = true
		}
	}
	var out []string
	for _, p := range id.Problems(cc.OnWorkspaceCreate == policy.CreateRecord, written) {
		out = append(out, fmt.Sprintf("connectors[%s].%s: %s", cc.Name, p.Setting, p.Text))
	}
	return out
}
