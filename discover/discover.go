// Package discover looks at a source and at the workspace before a first
// sync, for `syncd init`: the source's fields with sample values, its id
// field and change cursor (inspect.go, sql.go), the workspace's custom
// fields, and a proposed mapping guessed from names and samples
// (guess.go, names.go, values.go, region.go, language.go). file.go turns
// what it found into a commented configuration file.
//
// It reads the source through its connector: Open, the optional
// connector.FieldLister and connector.FieldDescriber, and the first batch
// of a Snapshot; a database's catalog through its connector's own
// inspection (postgres.Inspect). A CSV file is looked at first as text,
// decoded as the connector decodes it (csvfile.go): its encoding and
// delimiter, the program that exported it (exports.go, known headers as
// data) and its id: a column (idnames.go) or the e-mail and phone
// columns one is derived from. It writes nothing to either side.
package discover

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/syncd-io/syncd/workspace"
)

// Field is one field of the source's records.
type Field struct {
	// Name is the record field, as a mapping names it.
	Name string
	// Label is the field's display name where the source keeps one apart
	// from its key (a CRM's custom field); "" otherwise.
	Label string
	// Type is the field's type where the source tells ("timestamp with
	// time zone"); "" otherwise.
	Type string
	// Time is true for date and time columns.
	Time bool
	// Samples are the field's non-empty values in the records read.
	Samples []string
	// Hint, LabelFrom and Separator are what a recognised export says of
	// the field (see exportColumn): what it holds, the column holding
	// each row's label for it, and the separator of several values in
	// one cell. "" when nothing is known.
	Hint, LabelFrom, Separator string
}

// Setting is one key of the connector's settings as init writes it.
type Setting struct {
	Key string
	// Value is written as is; a secret is a ${NAME} reference.
	Value any
	// Why, when set, is written as the setting's comment.
	Why string
	// Note, when set, is written above the setting: what the choice
	// means, in a few lines.
	Note string
}

// Source is what discovery found of a source.
type Source struct {
	// Type is the connector type.
	Type string
	// Settings are the connector's settings to write, in order.
	Settings []Setting
	// Exports are the environment variables the settings refer to, with
	// the values given on the command line, in order: what the operator
	// must export before running syncd.
	Exports []Export
	// Fields are the record fields, in the source's order.
	Fields []Field
	// Skip names fields that are not for mapping (the id, the change
	// cursor, the soft-delete column), with why.
	Skip map[string]string
	// Records is the number of records read for samples.
	Records int
	// Export names the program whose export the source is, and where its
	// header was checked, when init recognised it; "" otherwise.
	Export, ExportSource string
	// RegionHint is the region the field names' language implies ("FR"
	// for Prénom, Société), with why; "" when they tell none. It settles
	// which region national phone numbers are read in when the numbers
	// are valid in several.
	RegionHint, RegionHintWhy string
	// RegionHintStrong is true when the file names the country (an
	// address's country column): its region is taken when the numbers
	// are possible there, even if some are not valid (the fictional
	// ranges of examples and tests).
	RegionHintStrong bool
	// Activities is the activities table found beside a database's
	// contact table, and its proposed mapping (activities.go); nil when
	// none looks like one.
	Activities *ActivityProposal
}

// Export is an environment variable a written ${NAME} reference needs.
type Export struct {
	Name  string
	Value string
	// Set is true when the value came from the environment already.
	Set bool
}

// MissingError names the settings discovery needs and was not given.
type MissingError struct {
	// Keys are the settings' keys, each with what it is.
	Keys []string
}

func (e *MissingError) Error() string {
	return fmt.Sprintf("missing settings: %v", e.Keys)
}

// Workspace reads the workspace's custom field definitions.
func Workspace(ctx context.Context, baseURL, apiKey string) ([]workspace.CustomFieldDefinition, error) {
	if baseURL == "" {
		return nil, errors.New("workspace: base url is required (--base-url)")
	}
	c, err := workspace.NewClient(workspace.ClientOptions{BaseURL: baseURL, APIKey: apiKey, MaxRetries: 2})
	if err != nil {
		return nil, fmt.Errorf("workspace: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	defs, err := c.CustomFieldDefinitions(ctx)
	if err != nil {
		return nil, fmt.Errorf("workspace: custom fields: %w", err)
	}
	return defs, nil
}
