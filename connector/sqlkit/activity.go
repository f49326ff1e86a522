package sqlkit

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/syncd-io/syncd/connector"
	"github.com/syncd-io/syncd/connector/activitytext"
)

// ActivityDialect is what a SQL connector gives the shared activity
// writer (Activities): its catalog, statements and errors.
type ActivityDialect struct {
	// Inspect reads the table: its name as SQL writes it (quoted,
	// qualified), its columns (name -> type), and the columns that alone
	// carry a unique index or the primary key. A table that does not exist
	// has no columns.
	Inspect func(ctx context.Context, table string) (sqlName string, cols map[string]string, unique map[string]bool, err error)
	// Exec runs a statement; Exists reports whether a query returns a row.
	Exec   func(ctx context.Context, query string, args ...any) error
	Exists func(ctx context.Context, query string, args ...any) (bool, error)
	// Quote quotes a column name.
	Quote func(name string) string
	// Param is the placeholder of the i-th argument (from 1) going into
	// a column of type typ.
	Param func(i int, typ string) string
	// Upsert is the clause after VALUES that replaces the values of the
	// row whose key column conflicts.
	Upsert func(key string, cols []string) string
	// TimeFormat formats the activity's time (in UTC).
	TimeFormat string
	// Refusal marks a definite refusal of the server as a
	// *connector.RefusedError; Redact removes secrets from errors.
	Refusal, Redact func(error) error
}

// Activities writes activities as rows of the table an ActivityTable
// names: one row per key, replaced in place (an upsert on the key column,
// which must be unique), so a redelivered or replayed activity stays one
// row. The table is inspected at the first use, and again after a
// failed inspection.
type Activities struct {
	d ActivityDialect
	t *connector.ActivityTable

	mu      sync.Mutex
	checked bool
	table   string            // as SQL writes it
	cols    map[string]string // activity field -> column name as in the catalog
	types   map[string]string // activity field -> column type
}

// NewActivities returns the writer of t (nil: the connector logs none).
func NewActivities(d ActivityDialect, t *connector.ActivityTable) *Activities {
	return &Activities{d: d, t: t}
}

// ActivityKinds returns calls and messages: both are rows.
func (w *Activities) ActivityKinds() []connector.ActivityKind {
	return []connector.ActivityKind{connector.ActivityCall, connector.ActivityMessage}
}

// Check inspects the table: every mapped column exists and the key
// column is unique. Its errors name the setting and the fix.
func (w *Activities) Check(ctx context.Context) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.checkLocked(ctx)
}

func (w *Activities) checkLocked(ctx context.Context) error {
	if w.checked {
		return nil
	}
	if w.t == nil || w.t.Table == "" {
		return errors.New("activities.table: no activities table is configured for this connector: add activities: {table: ..., mapping: {...}}")
	}
	name, cols, unique, err := w.d.Inspect(ctx, w.t.Table)
	if err != nil {
		return fmt.Errorf("read activities table %s: %w", w.t.Table, w.d.Redact(err))
	}
	if len(cols) == 0 {
		return fmt.Errorf("activities.table: table %q not found: create it, or name an existing one", w.t.Table)
	}
	names := make([]string, 0, len(cols))
	for c := range cols {
		names = append(names, c)
	}
	sort.Strings(names)
	w.cols, w.types = map[string]string{}, map[string]string{}
	var problems []error
	for _, f := range connector.ActivityFields() {
		want := w.t.Columns[f]
		if want == "" {
			continue
		}
		col, ok := findColumn(names, want)
		if !ok {
			problems = append(problems, fmt.Errorf("activities.mapping.%s: column %q not in %s (its columns: %s)", f, want, w.t.Table, strings.Join(names, ", ")))
			continue
		}
		w.cols[f], w.types[f] = col, cols[col]
	}
	if key, ok := w.cols[connector.ActivityFieldKey]; ok && !unique[key] {
		problems = append(problems, fmt.Errorf("activities.mapping.key: column %q of %s has no unique index or primary key of its own: add one (CREATE UNIQUE INDEX ON %s (%s)) so that an activity written twice stays one row",
			key, w.t.Table, w.t.Table, key))
	}
	for _, f := range connector.RequiredActivityFields() {
		if _, ok := w.cols[f]; !ok && w.t.Columns[f] == "" {
			problems = append(problems, fmt.Errorf("activities.mapping.%s: required", f))
		}
	}
	if len(problems) > 0 {
		return errors.Join(problems...)
	}
	w.table, w.checked = name, true
	return nil
}

// findColumn finds a column by its exact name, or else by its only
// case-insensitive match (unquoted names fold).
func findColumn(names []string, want string) (string, bool) {
	var folded []string
	for _, n := range names {
		if n == want {
			return n, true
		}
		if strings.EqualFold(n, want) {
			folded = append(folded, n)
		}
	}
	if len(folded) == 1 {
		return folded[0], true
	}
	return "", false
}

// FindActivity returns key when the table has its row, "" when not.
func (w *Activities) FindActivity(ctx context.Context, kind connector.ActivityKind, key, _ string) (string, error) {
	w.mu.Lock()
	err := w.checkLocked(ctx)
	table, col := w.table, w.cols[connector.ActivityFieldKey]
	typ := w.types[connector.ActivityFieldKey]
	w.mu.Unlock()
	if err != nil {
		return "", err
	}
	q := "SELECT 1 FROM " + table + " WHERE " + w.d.Quote(col) + " = " + w.d.Param(1, typ)
	found, err := w.d.Exists(ctx, q, key)
	if err != nil {
		return "", fmt.Errorf("find %s %s: %w", kind, key, w.d.Redact(err))
	}
	if !found {
		return "", nil
	}
	return key, nil
}

// WriteActivity writes the activity's row, replacing the row of its key
// when there is one; the activity's id is its key.
func (w *Activities) WriteActivity(ctx context.Context, _ string, a connector.Activity) (string, error) {
	w.mu.Lock()
	err := w.checkLocked(ctx)
	table := w.table
	cols, types := w.cols, w.types
	w.mu.Unlock()
	if err != nil {
		return "", err
	}
	vals := w.values(a)
	var names, params, quoted []string
	var args []any
	for _, f := range connector.ActivityFields() {
		col, ok := cols[f]
		if !ok {
			continue
		}
		args = append(args, vals[f])
		names = append(names, col)
		quoted = append(quoted, w.d.Quote(col))
		params = append(params, w.d.Param(len(args), types[f]))
	}
	var update []string
	for _, n := range names {
		if n != cols[connector.ActivityFieldKey] {
			update = append(update, n)
		}
	}
	q := "INSERT INTO " + table + " (" + strings.Join(quoted, ", ") + ") VALUES (" + strings.Join(params, ", ") + ") " +
		w.d.Upsert(cols[connector.ActivityFieldKey], update)
	if err := w.d.Exec(ctx, q, args...); err != nil {
		return "", withhold(fmt.Errorf("write %s %s: %w", a.Kind, a.Key, w.d.Refusal(w.d.Redact(err))), a)
	}
	return a.Key, nil
}

// values are the activity's fields as column values: text, or nil when
// empty.
func (w *Activities) values(a connector.Activity) map[string]any {
	v := map[string]any{
		connector.ActivityFieldKey:        a.Key,
		connector.ActivityFieldContact:    a.RecordID,
		connector.ActivityFieldKind:       string(a.Kind),
		connector.ActivityFieldDirection:  a.Direction,
		connector.ActivityFieldFrom:       a.From,
		connector.ActivityFieldTo:         a.To,
		connector.ActivityFieldStatus:     a.Status,
		connector.ActivityFieldOwner:      a.OwnerEmail,
		connector.ActivityFieldSubject:    activitytext.Subject(a),
		connector.ActivityFieldSummary:    activitytext.SummaryText(a),
		connector.ActivityFieldText:       a.Text,
		connector.ActivityFieldTranscript: activitytext.TranscriptText(a),
		connector.ActivityFieldRecording:  a.RecordingURL,
		connector.ActivityFieldSourceID:   a.SourceID,
	}
	if !a.At.IsZero() {
		v[connector.ActivityFieldAt] = a.At.UTC().Format(w.d.TimeFormat)
	}
	if a.Kind == connector.ActivityCall {
		v[connector.ActivityFieldDuration] = strconv.FormatInt(int64(a.Duration.Seconds()), 10)
	}
	for k, x := range v {
		if s, ok := x.(string); ok && s == "" {
			v[k] = nil
		}
	}
	return v
}

// withhold replaces an error whose text quotes the activity's text or
// transcript (a trigger's or a check's message may), keeping its kind.
func withhold(err error, a connector.Activity) error {
	if activitytext.Redact(err.Error(), a) == err.Error() {
		return err
	}
	var re *connector.RefusedError
	if errors.As(err, &re) {
		return fmt.Errorf("write %s %s: %w", a.Kind, a.Key, &connector.RefusedError{Field: re.Field, Code: re.Code, Reason: activitytext.Withheld})
	}
	if errors.Is(err, connector.ErrOutcomeUnknown) {
		return fmt.Errorf("write %s %s: %w: %s", a.Kind, a.Key, connector.ErrOutcomeUnknown, activitytext.Withheld)
	}
	return fmt.Errorf("write %s %s: %s", a.Kind, a.Key, activitytext.Withheld)
}

// TableShape is a table as `syncd init` looks at it for an activities
// table: its columns and types, and the columns that alone carry a
// unique index or the primary key.
type TableShape struct {
	Name   string
	Types  map[string]string
	Unique map[string]bool
}
