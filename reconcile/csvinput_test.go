package reconcile

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"

	csvconn "github.com/syncd-io/syncd/connector/csv"
	"github.com/syncd-io/syncd/policy"
	"github.com/syncd-io/syncd/workspace"
	"github.com/syncd-io/syncd/workspace/emulator"
)

// throughWorkspace points the env's client at a server that passes every
// call to the emulator through wrap.
func (e *env) throughWorkspace(wrap func(w http.ResponseWriter, r *http.Request, next http.Handler)) {
	e.t.Helper()
	emu := e.emu.Handler()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { wrap(w, r, emu) }))
	e.t.Cleanup(srv.Close)
	ws, err := workspace.NewClient(workspace.ClientOptions{
		BaseURL: srv.URL, APIKey: "test-key", RateLimit: 1000, Burst: 100, MaxRetries: 8,
		Log: quietLog(), CustomFieldValues: emulator.TestCustomFieldValues(),
	})
	if err != nil {
		e.t.Fatal(err)
	}
	if _, err := ws.LoadCustomFields(context.Background()); err != nil {
		e.t.Fatal(err)
	}
	e.ws = ws
}

// csvBytes is the env's rows as a CSV file.
func (e *env) csvBytes() []byte {
	var b strings.Builder
	for _, r := range e.rows {
		b.WriteString(strings.Join(r, ",") + "\n")
	}
	return []byte(b.String())
}

// rewriteInPlace writes data over the CSV file as an export job does:
// the same file (inode), cut to nothing, then written.
func (e *env) rewriteInPlace(data []byte) {
	f, err := os.OpenFile(e.csv, os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		e.t.Error(err)
		return
	}
	defer f.Close()
	if _, err := f.Write(data); err != nil {
		e.t.Error(err)
	}
}

// TestCSVRewrittenDuringAPassDeletesNothing: an export job rewrites the
// file in place while a pass reads it (onSourceDelete: delete, the
// mass-delete guard lifted, so that only the reader stands between a torn
// read and deletions). The reader notices, the pass stops with
// ErrFileChanged and deletes nothing; the next pass reads the new file
// whole.
func TestCSVRewrittenDuringAPassDeletesNothing(t *testing.T) {
	tests := []struct {
		name string
		// during changes the file at the pass's first write; after
		// finishes the export job, once the pass stopped.
		during func(e *env, next []byte)
		after  func(e *env, next []byte)
		how    string
	}{
		{name: "cut short, the rest written later",
			during: func(e *env, next []byte) { e.rewriteInPlace(next[:len(next)/3]) },
			after:  func(e *env, next []byte) { e.rewriteInPlace(next) },
			how:    "size"},
		{name: "written whole again, same size",
			during: func(e *env, next []byte) { e.rewriteInPlace(next) },
			after:  func(*env, []byte) {},
			how:    "written to"},
		{name: "replaced by a new file",
			during: func(e *env, next []byte) {
				tmp := e.csv + ".new"
				if err := os.WriteFile(tmp, next, 0o600); err != nil {
					e.t.Error(err)
				}
				if err := os.Rename(tmp, e.csv); err != nil {
					e.t.Error(err)
				}
			},
			after: func(*env, []byte) {},
			how:   "replaced"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			const rows = 2000
			e := newEnv(t, rows, emulator.Options{})
			e.policy, e.allow = policy.DeleteRemove, true
			if sum := e.run(); sum.Created != rows {
				t.Fatalf("first pass %v", sum)
			}
			// The next export changes every row's last name (same people).
			for i := 1; i <= rows; i++ {
				e.rows[i] = row(i, "v2")
			}
			next := e.csvBytes()
			var once sync.Once
			e.throughWorkspace(func(w http.ResponseWriter, r *http.Request, emu http.Handler) {
				if r.Method == http.MethodPatch {
					once.Do(func() { tt.during(e, next) })
				}
				emu.ServeHTTP(w, r)
			})
			e.writeCSV()
			sum, err := e.reconciler().Run(context.Background())
			if !errors.Is(err, csvconn.ErrFileChanged) || !strings.Contains(err.Error(), tt.how) {
				t.Fatalf("pass over a file rewritten under it: %v (summary %v), want ErrFileChanged saying %q", err, sum, tt.how)
			}
			if sum.Deleted != 0 || len(e.emu.Contacts()) != rows {
				t.Fatalf("pass deleted %d, workspace holds %d contacts; want no deletion of the %d", sum.Deleted, len(e.emu.Contacts()), rows)
			}
			tt.after(e, next)
			sum = e.run()
			if sum.Deleted != 0 || sum.Failed != 0 {
				t.Errorf("next pass %v, want no deletion and no failure", sum)
			}
			e.assertConverged()
		})
	}
}

// TestMalformedCSVLinesBecomeDeadLetters: one malformed line among good
// rows is a dead letter naming its line and the problem; every other row
// syncs. A linked row whose line breaks keeps its contact; a line whose
// id cannot be read keeps the pass from deleting anything; lines fixed
// later clear their dead letters.
func TestMalformedCSVLinesBecomeDeadLetters(t *testing.T) {
	const rows = 300
	e := newEnv(t, rows, emulator.Options{})
	e.policy, e.allow = policy.DeleteRemove, true
	good := e.csvBytes()
	lines := strings.SplitAfter(string(good), "\n")
	// After the header and 100 rows, a line with a field too many, and
	// one with a quote that never closes (its id is 1001 and 1002).
	broken := strings.Join(lines[:101], "") + "1001,Extra,Field,x@example.com,+1 415 555 0001,3,surplus\n" +
		"1002,\"Unclosed,Quote,q@example.com,+1 415 555 0002,3\n" + strings.Join(lines[101:], "")
	if err := os.WriteFile(e.csv, []byte(broken), 0o600); err != nil {
		t.Fatal(err)
	}
	sum := e.run()
	if sum.Created != rows || sum.Failed != 2 {
		t.Fatalf("pass %v, want %d created and 2 failed", sum, rows)
	}
	e.assertConverged()
	dls, err := e.store.DeadLetters.List("crm")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"1001":     "line 102: 7 fields, the header has 6",
		"line 103": `line 103: extraneous or missing " in quoted-field (a quoted field opened on this line does not close properly`,
	}
	if len(dls) != len(want) {
		t.Fatalf("dead letters %+v, want %d", dls, len(want))
	}
	for _, d := range dls {
		if w, ok := want[d.Key]; !ok || d.Operation != opRead || !strings.Contains(d.Reason, w) {
			t.Errorf("dead letter %s %s: %s; want operation read and %q", d.Key, d.Operation, d.Reason, w)
		}
	}

	// Row 50's line breaks (a field too many): its contact stays.
	lines50 := strings.SplitAfter(string(good), "\n")
	lines50[50] = strings.TrimSuffix(lines50[50], "\n") + ",surplus\n"
	if err := os.WriteFile(e.csv, []byte(strings.Join(lines50, "")), 0o600); err != nil {
		t.Fatal(err)
	}
	sum = e.run()
	if sum.Deleted != 0 || sum.Failed != 1 || len(e.emu.Contacts()) != rows {
		t.Errorf("pass with row 50 broken: %v, %d contacts; want 1 failed, none deleted", sum, len(e.emu.Contacts()))
	}
	// Row 60's line loses its id to a broken quote, and row 70 is gone
	// from the file: which contact the broken line is cannot be told, so
	// nothing is deleted this pass.
	lines60 := strings.SplitAfter(string(good), "\n")
	lines60[60] = "\"60,First60\n"
	lines60[70] = ""
	if err := os.WriteFile(e.csv, []byte(strings.Join(lines60, "")), 0o600); err != nil {
		t.Fatal(err)
	}
	sum = e.run()
	if sum.Deleted != 0 || len(e.emu.Contacts()) != rows {
		t.Errorf("pass with an unreadable id: %v, %d contacts; want none deleted", sum, len(e.emu.Contacts()))
	}
	// Fixed: the dead letters go, and row 70's deletion is applied.
	e.rows = append(e.rows[:70], e.rows[71:]...)
	e.writeCSV()
	sum = e.run()
	if sum.Deleted != 1 || sum.Failed != 0 {
		t.Errorf("pass over the fixed file %v, want row 70 deleted and nothing failed", sum)
	}
	if n, _ := e.store.DeadLetters.Count("crm"); n != 0 {
		dls, _ := e.store.DeadLetters.List("crm")
		t.Errorf("%d dead letters left after the file was fixed: %+v", n, dls)
	}
	e.assertConverged()
}

// TestCSVCutShortDeletesNothing: a file cut in the middle of a line (an
// export job that died) is taken for what it is: the rows it holds sync,
// its broken last line is a dead letter saying the file looks cut short,
// and no row missing after the cut is deleted (onSourceDelete: delete,
// the mass-delete guard lifted). The whole file, back, changes nothing.
func TestCSVCutShortDeletesNothing(t *testing.T) {
	tests := []struct {
		name string
		cut  func(line string) string // what is left of the line the file ends in
	}{
		{"inside a field", func(line string) string { return line[:len(line)/2] }},
		{"inside a quoted field", func(line string) string { return strings.SplitN(line, ",", 2)[0] + `,"Fir` }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			const rows = 500
			e := newEnv(t, rows, emulator.Options{})
			e.policy, e.allow = policy.DeleteRemove, true
			if sum := e.run(); sum.Created != rows {
				t.Fatalf("first pass %v", sum)
			}
			whole := e.csvBytes()
			lines := strings.SplitAfter(string(whole), "\n")
			cut := strings.Join(lines[:201], "") + tt.cut(strings.TrimSuffix(lines[201], "\n"))
			if err := os.WriteFile(e.csv, []byte(cut), 0o600); err != nil {
				t.Fatal(err)
			}
			sum := e.run()
			if sum.Deleted != 0 || len(e.emu.Contacts()) != rows {
				t.Fatalf("pass over a file cut short: %v, %d contacts; want none deleted", sum, len(e.emu.Contacts()))
			}
			dls, _ := e.store.DeadLetters.List("crm")
			if len(dls) != 1 || dls[0].Key != "line 202" || !strings.Contains(dls[0].Reason, "it looks cut short") {
				t.Errorf("dead letters %+v, want line 202 said cut short", dls)
			}
			if err := os.WriteFile(e.csv, whole, 0o600); err != nil {
				t.Fatal(err)
			}
			if sum := e.run(); sum.Deleted != 0 || sum.Failed != 0 {
				t.Errorf("pass over the whole file again: %v", sum)
			}
			if n, _ := e.store.DeadLetters.Count("crm"); n != 0 {
				t.Errorf("%d dead letters left", n)
			}
			e.assertConverged()
		})
	}
}
