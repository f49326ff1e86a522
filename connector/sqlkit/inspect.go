package sqlkit

import (
	"regexp"
	"strings"
)

// ColumnInfo is one column of a table as `syncd init` sees it, from a
// SQL connector's Inspect.
type ColumnInfo struct {
	// Name is the column's name as in the catalog.
	Name string
	// Type is its type as the catalog writes it.
	Type string
	// Time is true for date and time types.
	Time bool
	// Bool is true for boolean types (MySQL's tinyint(1)).
	Bool bool
	// PrimaryKey is true for the single column of the primary key.
	PrimaryKey bool
	// SetOnUpdate names what sets the column on every update (a BEFORE
	// UPDATE trigger assigning it, MySQL's ON UPDATE CURRENT_TIMESTAMP),
	// "" for nothing known.
	SetOnUpdate string
}

// Assigns reports whether a trigger's body assigns the column of NEW
// as a statement (`NEW.modified_on := now()`, `SET NEW.modified = NOW()`,
// `new."Modified" = ...`, NEW.`modified` = ...). A column whose name is
// not all lower case is matched only quoted when foldsUnquoted (as
// PostgreSQL folds unquoted names).
func Assigns(body, column string, foldsUnquoted bool) bool {
	q := regexp.QuoteMeta
	alts := []string{`"` + q(strings.ReplaceAll(column, `"`, `""`)) + `"`, "`" + q(strings.ReplaceAll(column, "`", "``")) + "`"}
	if !foldsUnquoted || strings.ToLower(column) == column {
		alts = append(alts, q(column)+`\b`)
	}
	// At a statement's start (after ;, BEGIN, THEN, ELSE, LOOP, SET or a
	// SET list's comma): `IF NEW.x = OLD.x` compares and sets nothing.
	re := regexp.MustCompile(`(?i)(?:^|;|,|\b(?:begin|then|else|loop|set))\s*new\s*\.\s*(?:` + strings.Join(alts, "|") + `)\s*:?=`)
	return re.MatchString(body)
}
