package discover

import (
	"context"
	"fmt"
	"strings"

	"github.com/syncd-io/syncd/connector/mysql"
	"github.com/syncd-io/syncd/connector/postgres"
	"github.com/syncd-io/syncd/connector/sqlkit"
)

func init() {
	preparers["csv"] = prepareCSV
	preparers["postgres"] = withActivities(prepareSQL(postgres.Inspect), postgres.TableShapes)
	preparers["mysql"] = withActivities(prepareMySQL, mysql.TableShapes)
}

// prepareMySQL reads the table's catalog as prepareSQL does and, when the
// table has DATETIME columns (which carry no zone), writes the server's
// time_zone as timeZone: the zone applications' sessions stamp them in.
func prepareMySQL(ctx context.Context, in *inspection) error {
	if err := prepareSQL(mysql.Inspect)(ctx, in); err != nil {
		return err
	}
	if in.given("timeZone") {
		return nil
	}
	var datetimes []string
	for name, f := range in.types {
		if strings.HasPrefix(strings.ToLower(f.Type), "datetime") {
			datetimes = append(datetimes, name)
		}
	}
	if len(datetimes) == 0 {
		return nil
	}
	value, server, err := mysql.ServerTimeZone(ctx, in.values["dsn"])
	if err != nil {
		return err
	}
	if value != "" {
		in.set("timeZone", value, "the server's time_zone ("+server+"), which applications' sessions stamp DATETIME values in")
	}
	return nil
}

// idField picks the id among field names: "id", else one name ending in
// id (customer_id, ContactId), else a name that says customer, client or
// account number in one of the usual languages (idNames), else "".
func idField(names []string) (string, string) {
	var cands []string
	for _, n := range names {
		w := words(n)
		if len(w) == 1 && w[0] == "id" {
			return n, "named id"
		}
		if len(w) > 1 && w[len(w)-1] == "id" && len(w) <= 2 {
			cands = append(cands, n)
		}
	}
	if len(cands) == 1 {
		return cands[0], "the only column named like an id"
	}
	for _, n := range names {
		if what, ok := idNames[strings.Join(words(n), "")]; ok {
			return n, fmt.Sprintf("%q is a usual name for a %s", n, what)
		}
	}
	return "", ""
}

// inspectFunc is a SQL connector's catalog inspection.
type inspectFunc func(ctx context.Context, dsn, table string) ([]sqlkit.ColumnInfo, error)

// prepareSQL reads a table's catalog: the primary key is the id, the
// change cursor is the date-time column that moves on every update (a
// trigger, ON UPDATE), or else the one named like a change time; a
// soft-delete column is taken when one is named so.
func prepareSQL(inspect inspectFunc) preparer {
	return func(ctx context.Context, in *inspection) error {
		cols, err := inspect(ctx, in.values["dsn"], in.values["table"])
		if err != nil {
			return err
		}
		return pickColumns(in, cols)
	}
}

func pickColumns(in *inspection, cols []sqlkit.ColumnInfo) error {
	names := make([]string, len(cols))
	for i, c := range cols {
		names[i] = c.Name
		in.types[c.Name] = Field{Type: c.Type, Time: c.Time}
	}
	if !in.given("idColumn") {
		id := ""
		for _, c := range cols {
			if c.PrimaryKey {
				id = c.Name
			}
		}
		why := "the primary key"
		if id == "" {
			id, why = idField(names)
		}
		if id == "" {
			return fmt.Errorf("idColumn: table %s has no single-column primary key and no column named id; name the column holding each row's unique id with --set idColumn=COLUMN", in.values["table"])
		}
		in.set("idColumn", id, why)
	}
	in.src.Skip[in.values["idColumn"]] = "the row id (idColumn)"
	if !in.given("updatedAtColumn") {
		var cands []SQLColumn
		for _, c := range cols {
			cands = append(cands, SQLColumn{Name: c.Name, Type: c.Type, Time: c.Time, SetOnUpdate: c.SetOnUpdate})
		}
		col, why, err := Cursor(in.values["table"], cands)
		if err != nil {
			return err
		}
		for _, c := range cols {
			if c.Name == col && strings.HasPrefix(strings.ToLower(c.Type), "datetime") && in.req.Type == "mysql" {
				why += "; a DATETIME has no time zone: timeZone (default the server's time_zone) says which it is in"
			}
		}
		in.set("updatedAtColumn", col, why)
	}
	in.src.Skip[in.values["updatedAtColumn"]] = "the change cursor (updatedAtColumn)"
	if !in.given("deletedAtColumn") {
		for _, c := range cols {
			switch strings.Join(words(c.Name), "_") {
			case "deleted_at", "deleted_on", "deleted", "is_deleted", "archived_at":
				if c.Time || c.Bool {
					in.set("deletedAtColumn", c.Name, "named like a soft-delete mark ("+c.Type+")")
				}
			}
		}
	}
	if c := in.values["deletedAtColumn"]; c != "" {
		in.src.Skip[c] = "the soft-delete mark (deletedAtColumn)"
	}
	return nil
}

// SQLColumn is a table column as a SQL connector's inspection sees it.
type SQLColumn struct {
	Name, Type string
	// Time is true for date and time types.
	Time bool
	// SetOnUpdate names what moves the column on every update (a trigger,
	// MySQL's ON UPDATE CURRENT_TIMESTAMP), "" for nothing known.
	SetOnUpdate string
}

// changeWords are the words of a column name that say it holds the time
// of the last change.
var changeWords = map[string]bool{"updated": true, "modified": true, "changed": true, "update": true, "modify": true, "mtime": true, "edited": true}

// Cursor picks a table's change cursor among its columns: the date-time
// column something sets on every update, or else the one date-time
// column named like a change time (updated_at, modified_on,
// LastChanged). It fails naming the columns and the fix when there is
// none, or several equally likely.
func Cursor(table string, cols []SQLColumn) (string, string, error) {
	var set, named []SQLColumn
	for _, c := range cols {
		if !c.Time {
			continue
		}
		if c.SetOnUpdate != "" {
			set = append(set, c)
			continue
		}
		for _, w := range words(c.Name) {
			if changeWords[w] {
				named = append(named, c)
				break
			}
		}
	}
	switch {
	case len(set) == 1:
		return set[0].Name, fmt.Sprintf("%s, set by %s on every update", set[0].Type, set[0].SetOnUpdate), nil
	case len(set) > 1:
		return "", "", fmt.Errorf("updatedAtColumn: several columns of %s move on update (%s); name the change cursor with --set updatedAtColumn=COLUMN", table, columnNames(set))
	case len(named) == 1:
		return named[0].Name, fmt.Sprintf("%s named like a change time; nothing in the table sets it, so every update must", named[0].Type), nil
	case len(named) > 1:
		return "", "", fmt.Errorf("updatedAtColumn: several columns of %s are named like a change time (%s); name the one every update sets with --set updatedAtColumn=COLUMN", table, columnNames(named))
	}
	return "", "", fmt.Errorf("updatedAtColumn: table %s has no timestamp column that moves on update; add one (a column updated_at timestamptz with a BEFORE UPDATE trigger setting it to now()) or name one with --set updatedAtColumn=COLUMN", table)
}

func columnNames(cols []SQLColumn) string {
	n := make([]string, len(cols))
	for i, c := range cols {
		n[i] = c.Name
	}
	return strings.Join(n, ", ")
}
