package mysql

import (
	"fmt"
	"strings"
)

// queries are the read statements of one table, built once at Open from
// catalog names (quoted) and types; values always travel as parameters.
type queries struct {
	// changesFromStart, changesAfter (cursor, cursor, id after which to
	// read) and changesFrom (cursor from which to read, included) read in
	// (cursor, id) order, LIMIT ? rows (the last parameter).
	changesFromStart, changesAfter, changesFrom string
	// snapshotFirst and snapshotAfter (id) read live rows by id.
	snapshotFirst, snapshotAfter string
	// countFromStart, countAfter, countFrom and countSnapshot count what
	// the reads above deliver.
	countFromStart, countAfter, countFrom, countSnapshot string
	// get reads rows by id: getFrom + " IN (" + placeholders + ")" + getOrder.
	getFrom, getOrder string
}

// Every read selects, in order: the id as text, the cursor as text
// (times as 'YYYY-MM-DD hh:mm:ss.ffffff', fixed width, so that text order
// is time order), whether the row is deleted, then the record's columns.
const fixedColumns = 3

// rowAlias names the table in reads, so that column references are
// never taken for the select list's output names.
const rowAlias = "r"

// cursorFormat is DATE_FORMAT's form of cursorText.
const cursorFormat = "'%Y-%m-%d %H:%i:%s.%f'"

// cursorText is the Go layout of a time cursor's text.
const cursorText = "2006-01-02 15:04:05.000000"

func ref(c column) string { return rowAlias + "." + c.ident }

// param is the placeholder of a value of column c sent as text: integers
// compare as exact numbers (unsigned BIGINT included), times as
// DATETIME(6) in the session's zone.
func param(c column) string {
	switch {
	case c.kind == kindInt:
		return "CAST(? AS DECIMAL(20,0))"
	case c.kind.isTime():
		return "CAST(? AS DATETIME(6))"
	}
	return "?"
}

// deletedExpr and liveExpr say whether a row is soft-deleted.
func deletedExpr(t *table) (deleted, live string) {
	d := t.deleted
	switch {
	case d == nil:
		return "0", "1"
	case d.kind == kindBool:
		return fmt.Sprintf("(COALESCE(%s, 0) <> 0)", ref(*d)), fmt.Sprintf("(COALESCE(%s, 0) = 0)", ref(*d))
	}
	return ref(*d) + " IS NOT NULL", ref(*d) + " IS NULL"
}

// selectList is the select list and FROM clause every read shares.
func selectList(t *table) (sel, from, cursor, changes string) {
	id, u := ref(t.id), ref(t.updated)
	cursor = u
	// A row without a cursor value has no place in the order, except a
	// time, which comes first.
	if !t.updated.notNull {
		if t.updated.kind.isTime() {
			cursor = fmt.Sprintf("COALESCE(%s, TIMESTAMP '1000-01-01 00:00:00')", u)
		} else {
			changes = " AND " + u + " IS NOT NULL"
		}
	}
	cursorText := "CAST(" + cursor + " AS CHAR)"
	if t.updated.kind.isTime() {
		cursorText = "DATE_FORMAT(" + cursor + ", " + cursorFormat + ")"
	}
	deleted, _ := deletedExpr(t)
	items := []string{"CAST(" + id + " AS CHAR)", cursorText, deleted}
	for _, c := range t.fetch {
		items = append(items, ref(c))
	}
	from = " FROM " + t.name + " AS " + rowAlias + " WHERE " + id + " IS NOT NULL"
	return "SELECT " + strings.Join(items, ", ") + from, from, cursor, changes
}

func buildQueries(t *table) queries {
	sel, from, cursor, changes := selectList(t)
	id := ref(t.id)
	_, live := deletedExpr(t)
	count := "SELECT COUNT(*)" + from
	order := fmt.Sprintf(" ORDER BY %s, %s LIMIT ?", cursor, id)
	pu, pid := param(t.updated), param(t.id)
	after := fmt.Sprintf(" AND (%[1]s > %[2]s OR (%[1]s = %[2]s AND %[3]s > %[4]s))", cursor, pu, id, pid)
	fromCursor := fmt.Sprintf(" AND %s >= %s", cursor, pu)
	return queries{
		changesFromStart: sel + changes + order,
		changesAfter:     sel + changes + after + order,
		changesFrom:      sel + changes + fromCursor + order,
		snapshotFirst:    sel + " AND " + live + " ORDER BY " + id + " LIMIT ?",
		snapshotAfter:    sel + " AND " + live + " AND " + id + " > " + pid + " ORDER BY " + id + " LIMIT ?",
		countFromStart:   count + changes,
		countAfter:       count + changes + after,
		countFrom:        count + changes + fromCursor,
		countSnapshot:    count + " AND " + live,
		getFrom:          sel + " AND " + id + " IN ",
		getOrder:         " ORDER BY " + id,
	}
}

// getQuery reads n ids.
func (q queries) getQuery(t *table, n int) string {
	ph := make([]string, n)
	for i := range ph {
		ph[i] = param(t.id)
	}
	return q.getFrom + "(" + strings.Join(ph, ", ") + ")" + q.getOrder
}
