package config

import (
	"slices"
	"sort"
	"strings"

	"github.com/syncd-io/syncd/connector"
)

// TableSpec returns where a database connector writes activities, nil
// when the block names no table.
func (a ActivitiesConfig) TableSpec() *connector.ActivityTable {
	if a.Table == "" {
		return nil
	}
	cols := make(map[string]string, len(a.Mapping))
	for k, v := range a.Mapping {
		cols[k] = strings.TrimSpace(v)
	}
	return &connector.ActivityTable{Table: strings.TrimSpace(a.Table), Columns: cols}
}

// validateActivityTable checks activities.table and activities.mapping:
// required by a type that writes activities to a table, refused by the
// others; the mapping names known activity fields, each in its own
// column, key and contact among them. Whether the columns exist is the
// connector's to check (syncd validate opens it).
func (cc *ConnectorConfig) validateActivityTable(ps *problems, p string, typ *connector.Type) {
	a := cc.Activities
	if !typ.ActivityTable {
		if a.Table != "" || a.Mapping != nil {
			ps.add(join(p, "table"), "remove table and mapping: "+typ.Name+" logs activities on its records' timelines",
				"%s takes no activities table", typ.Name)
		}
		return
	}
	example := "activities: {table: call_log, mapping: {key: activity_key, contact: contact_id, at: started_at, ...}}"
	if strings.TrimSpace(a.Table) == "" {
		ps.add(join(p, "table"), "name the table activities go to: "+example, "required: %s writes each call and text as a row of a table", typ.Name)
	}
	known := connector.ActivityFields()
	mp := join(p, "mapping")
	for _, f := range connector.RequiredActivityFields() {
		if strings.TrimSpace(a.Mapping[f]) == "" {
			ps.add(join(mp, f), "map "+f+" to a column: "+example, "required: %s", requiredWhy(f))
		}
	}
	byColumn := map[string]string{}
	fields := make([]string, 0, len(a.Mapping))
	for f := range a.Mapping {
		fields = append(fields, f)
	}
	sort.Strings(fields)
	for _, f := range fields {
		col := strings.TrimSpace(a.Mapping[f])
		fp := join(mp, f)
		switch {
		case !slices.Contains(known, f):
			ps.add(fp, unknownKeyHint(f, known), "unknown activity field %q", f)
		case col == "" && !slices.Contains(connector.RequiredActivityFields(), f):
			ps.add(fp, "name a column, or remove the line", "no column named")
		case byColumn[strings.ToLower(col)] != "":
			ps.add(fp, "give each activity field its own column", "column %q is also %s's", col, byColumn[strings.ToLower(col)])
		}
		if col != "" && byColumn[strings.ToLower(col)] == "" {
			byColumn[strings.ToLower(col)] = f
		}
	}
}

func requiredWhy(f string) string {
	if f == connector.ActivityFieldKey {
		return "a unique column holds each activity's key, so that a call written twice stays one row"
	}
	return "a column holds the id of the contact's row the activity belongs to"
}
