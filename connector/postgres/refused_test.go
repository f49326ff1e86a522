package postgres_test

import (
	"errors"
	"testing"

	"github.com/syncd-io/syncd/connector"
	"github.com/syncd-io/syncd/internal/testkit/pgtest"
)

// TestWriteErrorsFollowTheContract: a statement the server refuses is a
// *connector.RefusedError naming the column and the SQLSTATE; a value the
// connector cannot convert is not the server's refusal.
func TestWriteErrorsFollowTheContract(t *testing.T) {
	pool, sch := schema(t)
	pgtest.Exec(t, pool, `CREATE TABLE `+sch+`.c (id serial PRIMARY KEY, name text NOT NULL, age int CHECK (age >= 0),
		updated_at timestamptz NOT NULL DEFAULT now())`)
	pgtest.Exec(t, pool, `INSERT INTO `+sch+`.c (name) VALUES ('a')`)
	src := openSource(t, settings(sch+".c"))
	res := write(t, src,
		connector.Change{Op: connector.OpCreate, Fields: map[string]any{"age": "3"}},
		connector.Change{Op: connector.OpUpdate, ID: "1", Fields: map[string]any{"age": "-1"}},
		connector.Change{Op: connector.OpUpdate, ID: "1", Fields: map[string]any{"name": []string{"a", "b"}}},
	)
	for i, want := range []struct {
		field, code string
		refused     bool
	}{{"name", "23502", true}, {"", "23514", true}, {"", "", false}} {
		var re *connector.RefusedError
		if res[i].Err == nil || errors.Is(res[i].Err, connector.ErrRefused) != want.refused || errors.As(res[i].Err, &re) != want.refused {
			t.Errorf("change %d: %v, want refused %v", i, res[i].Err, want.refused)
			continue
		}
		if errors.Is(res[i].Err, connector.ErrOutcomeUnknown) {
			t.Errorf("change %d: %v reads as outcome unknown", i, res[i].Err)
		}
		if want.refused && (re.Field != want.field || re.Code != want.code || re.Reason == "") {
			t.Errorf("change %d: refused %+v, want field %q code %s", i, re, want.field, want.code)
		}
	}
}
