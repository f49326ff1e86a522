package postgres

import (
	"context"
	"fmt"
	"strings"

	"github.com/syncd-io/syncd/connector"
	"github.com/syncd-io/syncd/connector/sqlkit"
)

var _ connector.Getter = (*Source)(nil)

// Get reads the rows with the given ids, soft-deleted ones included (with
// Deleted set); ids without a row are left out. It selects the columns
// the reads select, in the same order, so that records read by Get and by
// Changes compare equal.
func (s *Source) Get(ctx context.Context, ids []string) ([]connector.Record, error) {
	if err := s.usable(ctx); err != nil {
		return nil, err
	}
	q := getQuery(s.tbl)
	return sqlkit.GetInChunks(ctx, ids, func(ctx context.Context, chunk []string) ([]connector.Record, error) {
		recs, _, err := s.page(ctx, q, chunk)
		return recs, err
	})
}

// getQuery selects the rows whose id is one of $1 (text[]), with the
// fixed columns of every read (id, cursor, deleted, updated time) and
// the record's columns, as buildQueries does.
func getQuery(t *table) string {
	id, u := ref(t.id), ref(t.updated)
	cursor := u
	if !t.updated.notNull && t.updated.kind.isTime() {
		cursor = fmt.Sprintf("COALESCE(%s, '-infinity'::%s)", u, t.updated.typ)
	}
	deleted := "false"
	if d := t.deleted; d != nil {
		if d.kind == kindBool {
			deleted = fmt.Sprintf("COALESCE(%s, false)", ref(*d))
		} else {
			deleted = ref(*d) + " IS NOT NULL"
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
	return "SELECT " + strings.Join(items, ", ") + " FROM " + t.name + " AS " + rowAlias +
		fmt.Sprintf(" WHERE %s = ANY($1::text[]::%s[]) ORDER BY %s", id, t.id.typ, id)
}
