package soak

import (
	"testing"
	"time"

	"github.com/syncd-io/syncd/state"
	"github.com/syncd-io/syncd/test/e2e"
)

func TestCheck(t *testing.T) {
	t0 := time.Date(2026, 11, 27, 6, 0, 0, 0, time.UTC)
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	const key = "i1@soak.example"
	create := Edit{At: at(0), Side: Table, Op: OpCreate, Key: key, Row: 1, Contact: "c1",
		Values: map[string]string{"firstName": "I1", "lastName": "I1", "company": "I1"}}
	edit := func(s float64, side, field, value string) Edit {
		return Edit{At: at(s), Side: side, Op: OpEdit, Key: key, Row: 1, Contact: "c1", Values: map[string]string{field: value}}
	}
	del := func(s float64, side string) Edit {
		return Edit{At: at(s), Side: side, Op: OpDelete, Key: key, Row: 1, Contact: "c1"}
	}
	both := func(v e2e.Values) Final {
		v.Email = key
		return Final{Rows: map[string][]e2e.Row{key: {{ID: 1, Values: v}}}, Contacts: map[string][]ContactValues{key: {{ID: "c1", Values: v}}},
			RowIDs: map[string][]int64{key: {1}}, ContactIDs: map[string][]string{key: {"c1"}}}
	}
	gone := Final{}
	tests := []struct {
		name    string
		edits   []Edit
		final   Final
		journal []state.Conflict
		check   func(t *testing.T, r Result)
	}{
		{"the last edit survived on both sides", []Edit{create, edit(10, App, "company", "A2"), edit(20, Table, "company", "T3")},
			both(e2e.Values{First: "I1", Last: "I1", Company: "T3"}), nil,
			func(t *testing.T, r Result) {
				if r.Fields != 3 || r.Survived != 3 || r.Lost != 0 || r.Failed() {
					t.Errorf("want 3 fields survived, got %+v", r)
				}
			}},
		{"a newer edit its side deleted later, kept on both sides by the contact made again", []Edit{create, del(5, App), edit(10, Table, "firstName", "T2"),
			edit(126, App, "firstName", "A3"), del(140, App), edit(150, Table, "company", "T4")},
			both(e2e.Values{First: "A3", Last: "I1", Company: "T4"}), nil,
			func(t *testing.T, r Result) {
				if r.Lost != 0 || r.Failed() || r.Survived != r.Fields {
					t.Errorf("want the newer first name counted as surviving, got %+v", r)
				}
			}},
		{"a newer edit its side deleted later, held on one side only", []Edit{create, del(5, App), edit(10, Table, "firstName", "T2"),
			edit(126, App, "firstName", "A3"), del(140, App), edit(150, Table, "company", "T4")},
			Final{Rows: map[string][]e2e.Row{key: {{ID: 1, Values: e2e.Values{First: "I1", Last: "I1", Company: "T4", Email: key}}}},
				Contacts: map[string][]ContactValues{key: {{ID: "c1", Values: e2e.Values{First: "A3", Last: "I1", Company: "T4", Email: key}}}}}, nil,
			func(t *testing.T, r Result) {
				if r.Lost != 1 || !r.Failed() {
					t.Errorf("want the table's first name lost, got %+v", r)
				}
			}},
		{"an app edit lost to an older table value", []Edit{create, edit(10, Table, "company", "T2"), edit(15, App, "company", "A3")},
			both(e2e.Values{First: "I1", Last: "I1", Company: "T2"}), nil,
			func(t *testing.T, r Result) {
				if r.Lost != 1 || !r.Failed() || len(r.Findings) != 1 {
					t.Fatalf("want 1 lost edit, got %+v", r)
				}
				f := r.Findings[0]
				if f.Field != "company" || f.Edit.Values["company"] != "A3" || f.Winner == nil || f.Winner.Values["company"] != "T2" ||
					f.Mechanism() != "app edit lost to an older table value" {
					t.Errorf("finding %+v (%s)", f, f.Mechanism())
				}
			}},
		{"a lost edit on one side only", []Edit{create, edit(10, App, "lastName", "A2")},
			Final{Rows: map[string][]e2e.Row{key: {{ID: 1, Values: e2e.Values{First: "I1", Last: "I1", Company: "I1", Email: key}}}},
				Contacts: map[string][]ContactValues{key: {{ID: "c1", Values: e2e.Values{First: "I1", Last: "A2", Company: "I1", Email: key}}}}}, nil,
			func(t *testing.T, r Result) {
				if r.Lost != 1 || r.Findings[0].Got[Table] != "I1" || r.Findings[0].Got[App] != "" {
					t.Errorf("want the edit lost in the table only, got %+v", r)
				}
			}},
		{"edits of both sides within the race window", []Edit{create, edit(10, Table, "company", "T2"), edit(12.5, App, "company", "A3")},
			both(e2e.Values{First: "I1", Last: "I1", Company: "T2"}), nil,
			func(t *testing.T, r Result) {
				if r.Races != 1 || r.Lost != 0 || r.Failed() {
					t.Errorf("want a race, got %+v", r)
				}
			}},
		{"a lost edit the journal records", []Edit{create, edit(10, Table, "company", "T2"), edit(15, App, "company", "A3")},
			both(e2e.Values{First: "I1", Last: "I1", Company: "T2"}),
			[]state.Conflict{{ExternalID: "1", ContactID: "c1", Winner: "db", Workspace: map[string]string{"company": "A3"}, Source: map[string]string{"company": "T2"}, At: at(16)}},
			func(t *testing.T, r Result) {
				if r.Journaled != 1 || r.Lost != 0 || !r.Failed() {
					t.Errorf("want the loss journaled, and still a loss (outside the race window), got %+v", r)
				}
			}},
		{"a journal entry of another value does not excuse", []Edit{create, edit(10, Table, "company", "T2"), edit(15, App, "company", "A3")},
			both(e2e.Values{First: "I1", Last: "I1", Company: "T2"}),
			[]state.Conflict{{ExternalID: "1", Workspace: map[string]string{"company": "A9"}, Source: map[string]string{"company": "T2"}, At: at(16)}},
			func(t *testing.T, r Result) {
				if r.Lost != 1 {
					t.Errorf("want a lost edit, got %+v", r)
				}
			}},
		{"an edit long after the other side's delete dropped", []Edit{create, del(10, Table), edit(20, App, "firstName", "A2")},
			gone, nil,
			func(t *testing.T, r Result) {
				if r.AfterDelete.Dropped != 1 || !r.Failed() || r.Findings[0].Kind != KindDroppedAfter || r.Findings[0].Delete.Side != Table {
					t.Errorf("want a dropped edit after delete, got %+v", r)
				}
			}},
		{"an edit after the other side's delete, journaled", []Edit{create, del(10, App), edit(20, Table, "firstName", "T2")},
			gone, []state.Conflict{{ExternalID: "1", At: at(21)}},
			func(t *testing.T, r Result) {
				if r.AfterDelete.Journaled != 1 || r.Failed() {
					t.Errorf("want a journaled edit after delete, got %+v", r)
				}
			}},
		{"an edit after the other side's delete, applied", []Edit{create, del(10, App), edit(20, Table, "firstName", "T2")},
			both(e2e.Values{First: "T2", Last: "I1", Company: "I1"}), nil,
			func(t *testing.T, r Result) {
				if r.AfterDelete.Applied != 1 || r.Fields != 1 || r.Survived != 1 || r.Failed() {
					t.Errorf("want an applied edit after delete, got %+v", r)
				}
			}},
		{"an edit within the race window of the other side's delete", []Edit{create, del(10, App), edit(11, Table, "firstName", "T2")},
			gone, nil,
			func(t *testing.T, r Result) {
				if r.AfterDelete.Races != 1 || r.Failed() {
					t.Errorf("want a race, got %+v", r)
				}
			}},
		{"an edit its own side deleted later", []Edit{create, del(10, App), edit(20, Table, "firstName", "T2"), del(25, Table)},
			gone, nil,
			func(t *testing.T, r Result) {
				if r.AfterDelete.Dropped != 0 || r.Failed() {
					t.Errorf("want no finding, got %+v", r)
				}
			}},
		{"an edit its own side deleted, the contact made again from the other side",
			[]Edit{create, edit(10, Table, "company", "T2"), del(20, Table), edit(30, App, "firstName", "A3")},
			both(e2e.Values{First: "A3", Last: "I1", Company: "I1"}), nil,
			func(t *testing.T, r Result) {
				if r.Lost != 0 || r.AfterDelete.Applied != 1 || r.Failed() {
					t.Errorf("want the recreated contact's values, got %+v", r)
				}
			}},
		{"a contact the app deleted, made again by a later table edit, holds the row's values",
			[]Edit{create, edit(10, Table, "lastName", "T2"), edit(20, App, "lastName", "A3"), del(21, App), edit(40, Table, "firstName", "T4")},
			both(e2e.Values{First: "T4", Last: "A3", Company: "I1"}), nil,
			func(t *testing.T, r Result) {
				if r.Lost != 0 || r.Fields != 1 || r.Survived != 1 || r.Failed() {
					t.Errorf("want only the edit after the delete checked, got %+v", r)
				}
			}},
		{"a contact twice", []Edit{create},
			Final{Rows: map[string][]e2e.Row{key: {{ID: 1, Values: e2e.Values{First: "I1", Last: "I1", Company: "I1", Email: key}}}},
				Contacts: map[string][]ContactValues{key: {{ID: "c1", Values: e2e.Values{First: "I1", Last: "I1", Company: "I1", Email: key}}, {ID: "c2"}}}}, nil,
			func(t *testing.T, r Result) {
				if len(r.Duplicates) != 1 || !r.Failed() || len(r.Findings) != 1 || r.Findings[0].Kind != KindDuplicate {
					t.Errorf("want a duplicate, got %+v", r)
				}
			}},
		{"a contact live on one side only", []Edit{create, del(10, Table)},
			Final{Contacts: map[string][]ContactValues{key: {{ID: "c1", Values: e2e.Values{First: "I1", Email: key}}}}}, nil,
			func(t *testing.T, r Result) {
				if r.Disagree != 1 || !r.Failed() || len(r.Findings) != 1 {
					t.Fatalf("want a disagreement, got %+v", r)
				}
				if m := r.Findings[0].Mechanism(); m != "only the contact lives after the table's delete 10.0s after the table's last create" {
					t.Errorf("mechanism %q", m)
				}
			}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.check(t, Check(tc.edits, tc.final, tc.journal, 3*time.Second))
		})
	}
}
