package postgres_test

import (
	"errors"
	"testing"

	"github.com/syncd-io/syncd/connector"
	"github.com/syncd-io/syncd/internal/testkit/pgtest"
)

// TestWriteErrorsFollowTheContract: a statement the server refuses for
// good (not-null, check, unique, a trigger's RAISE) is a
// *connector.RefusedError naming the column and the SQLSTATE, which
// connector.Dispose sets aside at once; a value the connector cannot
// convert is connector.ErrInvalidChange, not the server's refusal, and
// permanent too; an SQLSTATE of a passing condition (a serialization
// failure) is no refusal and is retried.
func TestWriteErrorsFollowTheContract(t *testing.T) {
	pool, sch := schema(t)
	pgtest.Exec(t, pool, `CREATE TABLE `+sch+`.c (id serial PRIMARY KEY, name text NOT NULL, age int CHECK (age >= 0),
		email text UNIQUE, note text, updated_at timestamptz NOT NULL DEFAULT now())`)
	// A trigger failing the way a busy server does (serialization
	// failure), and one refusing a row the way a validation trigger does.
	pgtest.Exec(t, pool, `CREATE FUNCTION `+sch+`.guard() RETURNS trigger LANGUAGE plpgsql AS $$
		BEGIN
			IF NEW.note = 'busy' THEN RAISE EXCEPTION 'could not serialize access' USING ERRCODE = '40001'; END IF;
			IF NEW.note = 'bad' THEN RAISE EXCEPTION 'note may not be bad'; END IF;
			RETURN NEW;
		END $$`)
	pgtest.Exec(t, pool, `CREATE TRIGGER guard BEFORE INSERT OR UPDATE ON `+sch+`.c FOR EACH ROW EXECUTE FUNCTION `+sch+`.guard()`)
	pgtest.Exec(t, pool, `INSERT INTO `+sch+`.c (name, email) VALUES ('a', 'a@example.com'), ('b', 'b@example.com')`)
	src := openSource(t, settings(sch+".c"))
	for _, tc := range []struct {
		name        string
		change      connector.Change
		refused     bool
		invalid     bool
		field, code string
		want        connector.Disposition
	}{
		{name: "not-null violation", change: connector.Change{Op: connector.OpCreate, Fields: map[string]any{"age": "3"}},
			refused: true, field: "name", code: "23502", want: connector.Permanent},
		{name: "check violation", change: connector.Change{Op: connector.OpUpdate, ID: "1", Fields: map[string]any{"age": "-1"}},
			refused: true, code: "23514", want: connector.Permanent},
		{name: "unique violation", change: connector.Change{Op: connector.OpUpdate, ID: "1", Fields: map[string]any{"email": "b@example.com"}},
			refused: true, field: "email", code: "23505", want: connector.Permanent},
		{name: "type error", change: connector.Change{Op: connector.OpUpdate, ID: "1", Fields: map[string]any{"age": "old"}},
			refused: true, code: "22P02", want: connector.Permanent},
		{name: "trigger refusal", change: connector.Change{Op: connector.OpUpdate, ID: "1", Fields: map[string]any{"note": "bad"}},
			refused: true, code: "P0001", want: connector.Permanent},
		{name: "value the connector cannot convert", change: connector.Change{Op: connector.OpUpdate, ID: "1", Fields: map[string]any{"name": []string{"a", "b"}}},
			invalid: true, want: connector.Permanent},
		{name: "column the table lacks", change: connector.Change{Op: connector.OpUpdate, ID: "1", Fields: map[string]any{"nickname": "x"}},
			invalid: true, want: connector.Permanent},
		{name: "serialization failure", change: connector.Change{Op: connector.OpUpdate, ID: "1", Fields: map[string]any{"note": "busy"}},
			want: connector.Retry},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := write(t, src, tc.change)[0].Err
			if err == nil {
				t.Fatal("the change was written")
			}
			var re *connector.RefusedError
			if errors.Is(err, connector.ErrRefused) != tc.refused || errors.As(err, &re) != tc.refused {
				t.Fatalf("%v: refused %v, want %v", err, errors.Is(err, connector.ErrRefused), tc.refused)
			}
			if errors.Is(err, connector.ErrInvalidChange) != tc.invalid {
				t.Fatalf("%v: invalid change %v, want %v", err, errors.Is(err, connector.ErrInvalidChange), tc.invalid)
			}
			if errors.Is(err, connector.ErrOutcomeUnknown) {
				t.Fatalf("%v reads as outcome unknown", err)
			}
			if tc.refused && (re.Field != tc.field || re.Code != tc.code || re.Reason == "") {
				t.Fatalf("refused %+v, want field %q code %s and the server's message", re, tc.field, tc.code)
			}
			if got := connector.Dispose(err); got != tc.want {
				t.Fatalf("Dispose(%v) = %v, want %v", err, got, tc.want)
			}
		})
	}
}
