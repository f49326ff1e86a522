package postgres

import (
	"fmt"
	"strings"
)

// queries are the read statements of one table, built once at Open from
// catalog names (quoted) and types; values always travel as parameters.
type queries struct {
	// changesFromStart, changesAfter ($2, $3: cursor and id after which
	// to read) and changesFrom ($2: cursor from which to read, included)
	// read in (cursor, id) order, $1 rows at most.
	changesFromStart, changesAfter, changesFrom string
	// safeBound returns the server's clock minus $1 (an interval), in the
	// cursor's type, as text.
	safeBound string
	// after reports whether cursor $1 comes after cursor $2.
	after string
	// snapshotFirst and snapshotAfter ($2: id) read live rows by id.
	snapshotFirst, snapshotAfter string
	// countFromStart, countAfter ($1, $2: cursor and id), countFrom ($1:
	// cursor) and countSnapshot count what the reads above deliver.
	countFromStart, countAfter, countFrom, countSnapshot string
}

// Every read selects, in order: the id as text, the cursor as text,
// whether the row is deleted, the cursor as a time (NULL unless a finite
// time), then the record's columns.
const fixedColumns = 4

// rowAlias names the table in reads, so that column references are
// never taken for the select list's output names.
const rowAlias = "r"

func ref(c column) string { return rowAlias + "." + c.ident }

func buildQueries(t *table) queries {
	id, u := ref(t.id), ref(t.updated)
	cursor := u
	// changes limits reads of changes: a row without a cursor value has
	// no place in the order, except a time, which comes first.
	changes := ""
	if !t.updated.notNull {
		if t.updated.kind.isTime() {
			cursor = fmt.Sprintf("COALESCE(%s, '-infinity'::%s)", u, t.updated.typ)
		} else {
			changes = " AND " + u + " IS NOT NULL"
		}
	}

	deleted, live := "false", "true"
	if d := t.deleted; d != nil {
		if d.kind == kindBool {
			deleted = fmt.Sprintf("COALESCE(%s, false)", ref(*d))
			live = fmt.Sprintf("NOT COALESCE(%s, false)", ref(*d))
		} else {
			deleted = ref(*d) + " IS NOT NULL"
			live = ref(*d) + " IS NULL"
		}
	}
	updatedAt := "NULL::timestamptz"
	if t.updated.kind.isTime() {
		updatedAt = fmt.Sprintf("CASE WHEN isfinite(%[1]s) THEN %[1]s::timestamptz END", u)
	}
	items := []string{id + "::text", cursor + "::text", deleted, updatedAt}
	for _, c := range t.fetch {
		items = append(items, selectExpr(c))
	}
	from := " FROM " + t.name + " AS " + rowAlias + " WHERE " + id + " IS NOT NULL"
	sel := "SELECT " + strings.Join(items, ", ") + from
	count := "SELECT count(*)" + from
	order := fmt.Sprintf(" ORDER BY %s, %s LIMIT $1", cursor, id)

	return queries{
		changesFromStart: sel + changes + order,
		changesAfter:     sel + changes + fmt.Sprintf(" AND (%s, %s) > ($2::%s, $3::%s)", cursor, id, t.updated.typ, t.id.typ) + order,
		changesFrom:      sel + changes + fmt.Sprintf(" AND %s >= $2::%s", cursor, t.updated.typ) + order,
		safeBound:        fmt.Sprintf("SELECT (statement_timestamp() - $1::interval)::%s::text", t.updated.typ),
		after:            fmt.Sprintf("SELECT $1::%[1]s > $2::%[1]s", t.updated.typ),
		snapshotFirst:    sel + " AND " + live + " ORDER BY " + id + " LIMIT $1",
		snapshotAfter:    sel + " AND " + live + fmt.Sprintf(" AND %s > $2::%s", id, t.id.typ) + " ORDER BY " + id + " LIMIT $1",
		countFromStart:   count + changes,
		countAfter:       count + changes + fmt.Sprintf(" AND (%s, %s) > ($1::%s, $2::%s)", cursor, id, t.updated.typ, t.id.typ),
		countFrom:        count + changes + fmt.Sprintf(" AND %s >= $1::%s", cursor, t.updated.typ),
		countSnapshot:    count + " AND " + live,
	}
}

// selectExpr is how a record column is selected.
func selectExpr(c column) string {
	switch c.kind {
	case kindBool, kindInt, kindFloat, kindTimestamptz, kindTimestamp, kindDate:
		return ref(c)
	case kindArray:
		return ref(c) + "::text[]"
	case kindFloat4:
		// The float8 of the server's text of the real, as the stream
		// carries it: 0.1, not the widened 0.10000000149011612.
		return ref(c) + "::text::float8"
	}
	return ref(c) + "::text"
}
