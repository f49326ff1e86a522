package sqlkit

import "fmt"

// IDColumn is what a table's catalog says of its id column, for syncd
// validate: the docs require it unique (a primary key or a unique index
// on it alone), and creating rows (onWorkspaceCreate: create) needs the
// server to fill it, as syncd inserts rows without an id.
type IDColumn struct {
	// Table names the table, quoted as in SQL; Column the id column.
	Table, Column string
	// Unique is true when a primary key or a unique index (on the column
	// alone, on every row) holds it.
	Unique bool
	// Filled is true when an insert that leaves the column out gets an
	// id the connector reads back: a default, an identity, AUTO_INCREMENT,
	// or a BEFORE INSERT trigger (which may set it).
	Filled bool
	// AddUnique is the statement that makes the column unique.
	AddUnique string
	// AddFill is the statement (or advice) that lets the server fill it.
	AddFill string
	// CannotFill says why the server does not fill it.
	CannotFill string
}

// Problems returns what syncd validate refuses: an id column that is
// not unique, and, when the connector creates rows (creates) without
// writing the id column itself (idWritten), one the server cannot fill.
// Each names the setting and the statement to run.
func (c IDColumn) Problems(creates, idWritten bool) []ProblemText {
	var out []ProblemText
	if !c.Unique {
		out = append(out, ProblemText{Setting: "settings.idColumn", Text: fmt.Sprintf(
			"%s of %s is not unique (no primary key and no unique index on it alone): two rows with one id would share one contact and their edits overwrite each other; add one: %s",
			c.Column, c.Table, c.AddUnique)})
	}
	if creates && !idWritten && !c.Filled {
		out = append(out, ProblemText{Setting: "onWorkspaceCreate", Text: fmt.Sprintf(
			"create inserts rows without %s, and %s: every contact created in the app would fail to be written back; %s, or set onWorkspaceCreate: ignore",
			c.Column, c.CannotFill, c.AddFill)})
	}
	return out
}

// ProblemText is one problem of a connector's configuration: the
// setting's path under the connector, and what is wrong with the fix.
type ProblemText struct {
	Setting string
	Text    string
}
