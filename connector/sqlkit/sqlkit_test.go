package sqlkit_test

import (
	"context"
	"errors"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/syncd-io/syncd/connector"
	"github.com/syncd-io/syncd/connector/sqlkit"
)

// rows is a fake table for the paging loops: cursor and id per row, in
// (cursor, id) order; times are fixed-width text.
type rows struct {
	data    [][2]string
	safe    string
	queries int
}

func (r *rows) ChangesPage(_ context.Context, pos *sqlkit.Position, limit int) ([]connector.Record, sqlkit.Position, error) {
	r.queries++
	var out []connector.Record
	var last sqlkit.Position
	for _, row := range r.data {
		after := pos == nil || row[0] > pos.U || (row[0] == pos.U && (pos.ID == nil || row[1] > *pos.ID))
		if pos != nil && pos.ID == nil {
			after = row[0] >= pos.U
		}
		if after && len(out) < limit {
			out = append(out, connector.Record{ID: row[1]})
			id := row[1]
			last = sqlkit.Position{U: row[0], ID: &id}
		}
	}
	return out, last, nil
}

func (r *rows) SnapshotPage(context.Context, *string, int) ([]connector.Record, sqlkit.Position, error) {
	return nil, sqlkit.Position{}, nil
}
func (r *rows) SafeBound(context.Context) (string, error)          { return r.safe, nil }
func (r *rows) After(_ context.Context, a, b string) (bool, error) { return a > b, nil }

// TestReadChangesKeysetAndLookback: ties on one cursor across batches are
// neither skipped nor repeated when a read resumes from any batch's
// checkpoint, and a checkpoint never passes the safe bound.
func TestReadChangesKeysetAndLookback(t *testing.T) {
	table := &rows{data: [][2]string{{"t1", "a"}, {"t2", "b"}, {"t2", "c"}, {"t2", "d"}, {"t3", "e"}, {"t5", "f"}}}
	tests := []struct {
		name      string
		safe      string
		batchSize int
		wantIDs   string
		wantLast  string
	}{
		{"exact cursor, ties split across batches", "", 2, "a,b,c,d,e,f", `{"u":"t5","id":"f"}`},
		{"batch of one", "", 1, "a,b,c,d,e,f", `{"u":"t5","id":"f"}`},
		{"lookback holds the checkpoint at the safe bound", "t2", 2, "a,b,c,d,e,f", `{"u":"t2"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			table.safe = tt.safe
			var ids []string
			var cps []string
			_, _, err := sqlkit.ReadChanges(context.Background(), table, "t", nil, tt.batchSize, func(_ context.Context, b connector.Batch) error {
				for _, r := range b.Records {
					ids = append(ids, r.ID)
				}
				cps = append(cps, b.Checkpoint)
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Join(ids, ","); got != tt.wantIDs || cps[len(cps)-1] != tt.wantLast {
				t.Fatalf("read %s ending at %s, want %s ending at %s", got, cps[len(cps)-1], tt.wantIDs, tt.wantLast)
			}
			if tt.safe != "" {
				return
			}
			// Resuming from every checkpoint reads exactly the rest.
			for i, cp := range cps {
				pos, err := sqlkit.ParseCheckpoint(cp)
				if err != nil {
					t.Fatal(err)
				}
				var rest []string
				if _, _, err := sqlkit.ReadChanges(context.Background(), table, "t", pos, tt.batchSize, func(_ context.Context, b connector.Batch) error {
					for _, r := range b.Records {
						rest = append(rest, r.ID)
					}
					return nil
				}); err != nil {
					t.Fatal(err)
				}
				read := (i + 1) * tt.batchSize
				if got, want := strings.Join(rest, ","), strings.Join(strings.Split(tt.wantIDs, ",")[min(read, 6):], ","); got != want {
					t.Errorf("resumed after batch %d: %q, want %q", i, got, want)
				}
			}
		})
	}
}

type col struct {
	name string
	time bool
}

func (c col) Name() string    { return c.name }
func (c col) HoldsTime() bool { return c.time }
func (c col) Type() string    { return map[bool]string{true: "timestamp", false: "int"}[c.time] }

// TestPick resolves settings against a catalog, naming each problem.
func TestPick(t *testing.T) {
	all := []col{{"id", false}, {"name", false}, {"updated_at", true}, {"rev", false}}
	cat := sqlkit.Catalog[col]{
		Table: "t", All: all,
		Find: func(n string) (col, bool) {
			for _, c := range all {
				if strings.EqualFold(c.name, n) {
					return c, true
				}
			}
			return col{}, false
		},
	}
	minute, zero := time.Minute, time.Duration(0)
	tests := []struct {
		name       string
		names      sqlkit.Names
		fields     []string
		wantFetch  string
		wantLook   time.Duration
		wantErrors []string
	}{
		{"defaults", sqlkit.Names{IDColumn: "id", UpdatedAtColumn: "updated_at"}, nil, "id,name,updated_at,rev", time.Minute, nil},
		{"mapped fields only", sqlkit.Names{IDColumn: "id", UpdatedAtColumn: "UPDATED_AT"}, []string{"name", "name"}, "name", time.Minute, nil},
		{"exact cursor", sqlkit.Names{IDColumn: "id", UpdatedAtColumn: "rev", Lookback: &zero}, nil, "id,name,updated_at,rev", 0, nil},
		{"lookback on an integer cursor", sqlkit.Names{IDColumn: "id", UpdatedAtColumn: "rev", Lookback: &minute}, nil, "", 0,
			[]string{"lookback: column rev is of type int, not a timestamp; set lookback to 0"}},
		{"unknown names", sqlkit.Names{IDColumn: "key", UpdatedAtColumn: "updated_at", DeletedAtColumn: "gone", Columns: []string{"name", "nope"}}, []string{"id"}, "", time.Minute,
			[]string{`idColumn: no column "key" in t`, `deletedAtColumn: no column "gone" in t`, `columns: no column "nope" in t`, `mapped field "id" is not a column of t`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, errs := sqlkit.Pick(cat, tt.names, time.Minute, tt.fields)
			var msgs []string
			for _, e := range errs {
				msgs = append(msgs, e.Error())
			}
			if strings.Join(msgs, "\n") != strings.Join(tt.wantErrors, "\n") {
				t.Fatalf("errors %q, want %q", msgs, tt.wantErrors)
			}
			if len(errs) > 0 {
				return
			}
			var fetch []string
			for _, c := range p.Fetch {
				fetch = append(fetch, c.name)
			}
			if strings.Join(fetch, ",") != tt.wantFetch || p.Lookback != tt.wantLook {
				t.Errorf("fetch %v lookback %v, want %s %v", fetch, p.Lookback, tt.wantFetch, tt.wantLook)
			}
		})
	}
}

// TestText writes each record value type as text, with the dialect's
// forms for booleans, times, lists and non-finite floats.
func TestText(t *testing.T) {
	f := sqlkit.Format{
		Bool: func(b bool) string { return map[bool]string{true: "1", false: "0"}[b] },
		Time: func(t time.Time) string { return t.UTC().Format("2006-01-02 15:04:05") },
	}
	tests := []struct {
		name string
		in   any
		want any
		err  string
	}{
		{"nil", nil, nil, ""},
		{"string", "Zoë 🎉", "Zoë 🎉", ""},
		{"int64", int64(-9007199254740993), "-9007199254740993", ""},
		{"float", 1.25, "1.25", ""},
		{"bool", true, "1", ""},
		{"time", time.Date(2026, 1, 2, 4, 5, 6, 0, time.FixedZone("x", 3600)), "2026-01-02 03:05:06", ""},
		{"list without a list form", []string{"a"}, nil, "a list of values"},
		{"NaN refused without a form", math.NaN(), nil, "not a number the column can hold"},
		{"unsupported", struct{}{}, nil, "unsupported value type"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := sqlkit.Text(tt.in, f)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("Text(%v) = %v, %v; want %v", tt.in, got, err, tt.want)
			}
		})
	}
}

// TestRedactor keeps the dsn and its password out of messages while
// errors.Is still sees the cause.
func TestRedactor(t *testing.T) {
	r := sqlkit.NewRedactor("user:p@ss w0rd@tcp(db:3306)/crm")
	r.Add("p@ss w0rd")
	cause := context.DeadlineExceeded
	err := r.Redact(errors.Join(errors.New("dial user:p@ss w0rd@tcp(db:3306)/crm: p@ss%20w0rd p%40ss+w0rd"), cause))
	if strings.Contains(err.Error(), "w0rd") || !errors.Is(err, cause) {
		t.Fatalf("redacted %q (is deadline: %v)", err, errors.Is(err, cause))
	}
}

// fakeDB records what a Writer applied and fails the changes it is told.
type fakeDB struct {
	applied []string
	fail    map[string]error
	commit  error
	inTx    bool
}

type fakeWriter struct{ db *fakeDB }

func (w fakeWriter) Pool() *fakeDB { return w.db }
func (w fakeWriter) Begin(context.Context) (*fakeDB, func(context.Context) error, func(context.Context) error, error) {
	tx := &fakeDB{fail: w.db.fail, inTx: true}
	return tx, func(context.Context) error {
			if w.db.commit != nil {
				return w.db.commit
			}
			w.db.applied = append(w.db.applied, tx.applied...)
			return nil
		}, func(context.Context) error { return nil },
		nil
}
func (w fakeWriter) Apply(_ context.Context, db *fakeDB, c connector.Change) (string, error) {
	if err := db.fail[c.ID]; err != nil {
		return c.ID, err
	}
	db.applied = append(db.applied, c.ID)
	return c.ID, nil
}
func (w fakeWriter) MaybeSent(err error) bool { return strings.Contains(err.Error(), "lost") }
func (w fakeWriter) ChangeError(c connector.Change, err error) error {
	return sqlkit.ChangeError(c, "t", err, func(e error) error { return e })
}

// TestWrite: several changes go in one transaction; a statement failing
// in it sends each change alone; a lost COMMIT makes every change's
// outcome unknown.
func TestWrite(t *testing.T) {
	changes := func(ids ...string) []connector.Change {
		var cs []connector.Change
		for _, id := range ids {
			cs = append(cs, connector.Change{Op: connector.OpUpdate, ID: id})
		}
		return cs
	}
	refused := errors.New("refused")
	tests := []struct {
		name    string
		fail    map[string]error
		commit  error
		want    string // applied ids
		wantErr []error
	}{
		{"all in one transaction", nil, nil, "1,2,3", []error{nil, nil, nil}},
		{"not found stays in the transaction", map[string]error{"2": connector.ErrNotFound}, nil, "1,3", []error{nil, connector.ErrNotFound, nil}},
		{"a refusal sends each alone", map[string]error{"2": refused}, nil, "1,3", []error{nil, refused, nil}},
		{"commit not sent: each alone", nil, errors.New("refused commit"), "1,2,3", []error{nil, nil, nil}},
		{"commit answer lost", nil, errors.New("lost"), "", []error{connector.ErrOutcomeUnknown, connector.ErrOutcomeUnknown, connector.ErrOutcomeUnknown}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			db := &fakeDB{fail: tt.fail, commit: tt.commit}
			res := sqlkit.Write[*fakeDB](context.Background(), fakeWriter{db}, changes("1", "2", "3"))
			if got := strings.Join(db.applied, ","); got != tt.want {
				t.Errorf("applied %q, want %q", got, tt.want)
			}
			for i, r := range res {
				if w := tt.wantErr[i]; (w == nil) != (r.Err == nil) || (w != nil && !errors.Is(r.Err, w)) {
					t.Errorf("change %d: %v, want %v", i+1, r.Err, w)
				}
				if r.ID != strconv.Itoa(i+1) {
					t.Errorf("change %d: ID %q", i+1, r.ID)
				}
			}
		})
	}
}
