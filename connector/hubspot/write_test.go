package hubspot

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/syncd-io/syncd/connector"
	"github.com/syncd-io/syncd/connector/hubspot/hubspotemu"
)

func (f *fixture) write(t *testing.T, changes []connector.Change) []connector.WriteResult {
	t.Helper()
	res, err := f.src.Write(context.Background(), changes)
	if err != nil {
		t.Fatalf("write: %v", err)
	}
	if len(res) != len(changes) {
		t.Fatalf("%d results for %d changes", len(res), len(changes))
	}
	return res
}

func (f *fixture) prop(t *testing.T, id, name string) string {
	t.Helper()
	c, ok := f.srv.Contact(id)
	if !ok {
		t.Fatalf("no contact %s", id)
	}
	return c.Properties[name]
}

func TestWriteUpdatesInBatchesOf100(t *testing.T) {
	f := newFixture(t, hubspotemu.Options{Seed: 20}, nil)
	ids := addAt(f.srv, base, make([]map[string]string, 250)...)
	var changes []connector.Change
	for i, id := range ids {
		changes = append(changes, connector.Change{Op: connector.OpUpdate, ID: id, Fields: map[string]any{"firstname": fmt.Sprint("n", i)}})
	}
	f.srv.ResetStats()
	for i, r := range f.write(t, changes) {
		if r.Err != nil || r.ID != ids[i] {
			t.Fatalf("result %d: %+v", i, r)
		}
	}
	if n := f.srv.Stats().Requests[hubspotemu.RouteBatchUpdate]; n != 3 {
		t.Errorf("%d batch/update calls for 250 updates, want 3", n)
	}
	for i, id := range ids {
		if got := f.prop(t, id, "firstname"); got != fmt.Sprint("n", i) {
			t.Fatalf("contact %s firstname %q, want n%d", id, got, i)
		}
	}
}

func TestWriteUpdatePartialFailure(t *testing.T) {
	f := newFixture(t, hubspotemu.Options{Seed: 21}, nil)
	ids := addAt(f.srv, base, make([]map[string]string, 4)...)
	if err := f.srv.Archive(ids[3]); err != nil {
		t.Fatal(err)
	}
	changes := []connector.Change{
		{Op: connector.OpUpdate, ID: ids[0], Fields: map[string]any{"lastname": "A"}},
		{Op: connector.OpUpdate, ID: "999999999", Fields: map[string]any{"lastname": "B"}},
		{Op: connector.OpUpdate, ID: ids[1], Fields: map[string]any{"lastname": "C"}},
		{Op: connector.OpUpdate, ID: ids[3], Fields: map[string]any{"lastname": "D"}},
		{Op: connector.OpUpdate, ID: "not-a-number", Fields: map[string]any{"lastname": "E"}},
	}
	f.srv.ResetStats()
	res := f.write(t, changes)
	for i, wantNotFound := range []bool{false, true, false, true, true} {
		if got := errors.Is(res[i].Err, connector.ErrNotFound); got != wantNotFound {
			t.Errorf("change %d: err %v, want not found = %v", i, res[i].Err, wantNotFound)
		}
		if !wantNotFound && res[i].Err != nil {
			t.Errorf("change %d: %v", i, res[i].Err)
		}
	}
	if f.prop(t, ids[0], "lastname") != "A" || f.prop(t, ids[1], "lastname") != "C" {
		t.Error("the valid updates were not applied")
	}
	st := f.srv.Stats()
	if st.Requests[hubspotemu.RouteBatchUpdate] != 1 || st.Responses[hubspotemu.RouteBatchUpdate][207] != 1 {
		t.Errorf("update calls %v, want one 207", st.Responses[hubspotemu.RouteBatchUpdate])
	}
}

func TestWriteNarrowsWholeCallRefusal(t *testing.T) {
	// An unknown property fails HubSpot's whole update call; the writer
	// finds the input at fault and applies the others.
	f := newFixture(t, hubspotemu.Options{Seed: 22}, nil)
	ids := addAt(f.srv, base, make([]map[string]string, 10)...)
	var changes []connector.Change
	for i, id := range ids {
		fields := map[string]any{"firstname": fmt.Sprint("v", i)}
		if i == 6 {
			fields["no_such_property"] = "x"
		}
		changes = append(changes, connector.Change{Op: connector.OpUpdate, ID: id, Fields: fields})
	}
	f.srv.ResetStats()
	res := f.write(t, changes)
	for i, r := range res {
		var he *Error
		if i == 6 {
			if !errors.As(r.Err, &he) || he.Category != "VALIDATION_ERROR" || len(he.Errors) == 0 || he.Errors[0].Code != "PROPERTY_DOESNT_EXIST" {
				t.Errorf("change 6: %v, want the validation error", r.Err)
			}
			continue
		}
		if r.Err != nil {
			t.Errorf("change %d: %v", i, r.Err)
		}
		if got := f.prop(t, ids[i], "firstname"); got != fmt.Sprint("v", i) {
			t.Errorf("contact %d firstname %q", i, got)
		}
	}
	if n := f.srv.Stats().Requests[hubspotemu.RouteBatchUpdate]; n > 9 {
		t.Errorf("%d update calls to narrow 10 inputs, want at most 9", n)
	}
}

func TestWriteCreatesMapIDsWhateverTheOrder(t *testing.T) {
	f := newFixture(t, hubspotemu.Options{Seed: 23}, nil)
	var changes []connector.Change
	for i := range 150 {
		changes = append(changes, connector.Change{Op: connector.OpCreate, Fields: map[string]any{
			"email": fmt.Sprintf("new%d@example.com", i), "firstname": fmt.Sprint("F", i), "phone": nil,
		}})
	}
	res := f.write(t, changes)
	if n := f.srv.Stats().Requests[hubspotemu.RouteBatchCreate]; n != 2 {
		t.Errorf("%d batch/create calls for 150 creates, want 2", n)
	}
	seen := map[string]bool{}
	for i, r := range res {
		if r.Err != nil || r.ID == "" {
			t.Fatalf("create %d: %+v", i, r)
		}
		if seen[r.ID] {
			t.Fatalf("id %s given to two creates", r.ID)
		}
		seen[r.ID] = true
		if got := f.prop(t, r.ID, "email"); got != fmt.Sprintf("new%d@example.com", i) {
			t.Errorf("create %d got id %s, whose email is %q", i, r.ID, got)
		}
	}
}

func TestWriteCreatePartialFailure(t *testing.T) {
	f := newFixture(t, hubspotemu.Options{Seed: 24}, nil)
	existing := addAt(f.srv, base, map[string]string{"email": "taken@example.com"})[0]
	res := f.write(t, []connector.Change{
		{Op: connector.OpCreate, Fields: map[string]any{"email": "ok1@example.com"}},
		{Op: connector.OpCreate, Fields: map[string]any{"email": "TAKEN@example.com"}},
		{Op: connector.OpCreate, Fields: map[string]any{"email": "ok2@example.com", "bogus": "1"}},
		{Op: connector.OpCreate, Fields: map[string]any{"email": "ok3@example.com"}},
	})
	var he *Error
	if !errors.As(res[1].Err, &he) || he.Category != "CONFLICT" || he.ExistingID() != existing {
		t.Errorf("conflicting create: %v, want CONFLICT naming %s", res[1].Err, existing)
	}
	if !errors.As(res[2].Err, &he) || he.Category != "VALIDATION_ERROR" {
		t.Errorf("invalid create: %v, want VALIDATION_ERROR", res[2].Err)
	}
	for _, i := range []int{0, 3} {
		if res[i].Err != nil || f.prop(t, res[i].ID, "email") != fmt.Sprintf("ok%d@example.com", map[int]int{0: 1, 3: 3}[i]) {
			t.Errorf("create %d: %+v", i, res[i])
		}
	}
	if st := f.srv.Stats(); st.Requests[hubspotemu.RouteBatchCreate] != 1 || st.Responses[hubspotemu.RouteBatchCreate][207] != 1 {
		t.Errorf("create calls %v, want one 207", st.Responses[hubspotemu.RouteBatchCreate])
	}
}

func TestWriteDeletes(t *testing.T) {
	f := newFixture(t, hubspotemu.Options{Seed: 25}, nil)
	ids := addAt(f.srv, base, make([]map[string]string, 3)...)
	f.srv.SetClock(base.Add(time.Minute))
	changes := []connector.Change{
		{Op: connector.OpDelete, ID: ids[0]},
		{Op: connector.OpDelete, ID: "424242"},
		{Op: connector.OpDelete, ID: ids[2]},
	}
	res := f.write(t, changes)
	for i, wantNotFound := range []bool{false, true, false} {
		if got := errors.Is(res[i].Err, connector.ErrNotFound); got != wantNotFound || (!wantNotFound && res[i].Err != nil) {
			t.Errorf("delete %d: %v, want not found = %v", i, res[i].Err, wantNotFound)
		}
	}
	for _, i := range []int{0, 2} {
		c, _ := f.srv.Contact(ids[i])
		if !c.Archived || !c.UpdatedAt.Equal(base) {
			t.Errorf("contact %s: archived %v, updated %s; want archived with lastmodifieddate unchanged", ids[i], c.Archived, c.UpdatedAt)
		}
	}
	if c, _ := f.srv.Contact(ids[1]); c.Archived {
		t.Error("a contact not deleted was archived")
	}
	// Deleting again: not found, nothing archived again.
	f.srv.ResetStats()
	again := f.write(t, changes[:1])
	if !errors.Is(again[0].Err, connector.ErrNotFound) || f.srv.Stats().Requests[hubspotemu.RouteBatchArchive] != 0 {
		t.Errorf("repeated delete: %v with %d archive calls, want not found and none", again[0].Err, f.srv.Stats().Requests[hubspotemu.RouteBatchArchive])
	}
}

func TestWriteCreateOutcomeUnknown(t *testing.T) {
	t.Run("create call fails after applying: its changes fail as unknown", func(t *testing.T) {
		f := newFixture(t, hubspotemu.Options{Seed: 26}, nil)
		id := addAt(f.srv, base, map[string]string{"firstname": "a"})[0]
		f.srv.Inject(hubspotemu.RouteBatchCreate, hubspotemu.Fault{Status: 500, AfterApply: true})
		res := f.write(t, []connector.Change{
			{Op: connector.OpCreate, Fields: map[string]any{"email": "x@example.com"}},
			{Op: connector.OpUpdate, ID: id, Fields: map[string]any{"firstname": "b"}},
		})
		if !errors.Is(res[0].Err, ErrOutcomeUnknown) || res[0].ID != "" {
			t.Fatalf("create: %+v, want ErrOutcomeUnknown", res[0])
		}
		if res[1].Err != nil {
			t.Fatalf("update: %v", res[1].Err)
		}
		if n := f.srv.Stats().Requests[hubspotemu.RouteBatchCreate]; n != 1 {
			t.Errorf("%d create calls, want 1: a create is never retried after a 5xx", n)
		}
		if len(f.srv.Contacts()) != 2 {
			t.Errorf("the server applied the create before failing: it must hold it")
		}
	})
	t.Run("later create call fails: results per change", func(t *testing.T) {
		f := newFixture(t, hubspotemu.Options{Seed: 27}, nil)
		var changes []connector.Change
		for i := range 120 {
			changes = append(changes, connector.Change{Op: connector.OpCreate, Fields: map[string]any{"email": fmt.Sprintf("c%d@example.com", i)}})
		}
		// The first call goes through, the second answers 502.
		f.srv.Inject(hubspotemu.RouteBatchCreate, hubspotemu.Fault{}, hubspotemu.Fault{Status: 502})
		res := f.write(t, changes)
		for i, r := range res {
			if i < 100 && (r.Err != nil || r.ID == "") {
				t.Fatalf("create %d of the call that succeeded: %+v", i, r)
			}
			if i >= 100 && !errors.Is(r.Err, ErrOutcomeUnknown) {
				t.Fatalf("create %d of the call that failed: %v, want ErrOutcomeUnknown", i, r.Err)
			}
		}
	})
}

func TestWriteUpdateSameIDTwice(t *testing.T) {
	f := newFixture(t, hubspotemu.Options{Seed: 28}, nil)
	id := addAt(f.srv, base, map[string]string{"firstname": "a"})[0]
	res := f.write(t, []connector.Change{
		{Op: connector.OpUpdate, ID: id, Fields: map[string]any{"firstname": "b"}},
		{Op: connector.OpUpdate, ID: id, Fields: map[string]any{"firstname": "c", "lastname": nil}},
	})
	if res[0].Err != nil || res[1].Err != nil {
		t.Fatal(res)
	}
	if got := f.prop(t, id, "firstname"); got != "c" {
		t.Errorf("firstname %q, want the later change's c", got)
	}
	if n := f.srv.Stats().Requests[hubspotemu.RouteBatchUpdate]; n != 2 {
		t.Errorf("%d update calls, want 2 (one id per call)", n)
	}
}

func TestToProperties(t *testing.T) {
	at := time.Date(2025, 1, 2, 3, 4, 5, 6e6, time.FixedZone("x", 3600))
	got, err := toProperties(map[string]any{
		"s": "x", "n": nil, "b": true, "i": int64(-4), "f": 1.5, "t": at, "l": []string{"a", "b"}, "z": time.Time{},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"s": "x", "n": "", "b": "true", "i": "-4", "f": "1.5", "t": "2025-01-02T02:04:05.006Z", "l": "a;b", "z": ""}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %q, want %q", k, got[k], v)
		}
	}
	if _, err := toProperties(map[string]any{"x": struct{}{}}); err == nil {
		t.Error("a struct value converted")
	}
}
