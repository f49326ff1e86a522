package state

import (
	"errors"
	"fmt"
	"reflect"
	"testing"
	"time"
)

func TestRunHistory(t *testing.T) {
	s, clk := openTest(t)
	var started []Run
	for i, c := range []string{"crm", "pg", "crm", "crm", "pg"} {
		r, err := s.Runs.Start(c, "run")
		must(t, err)
		if r.ID != uint64(i+1) || !r.StartedAt.Equal(clk.Now()) || r.Connector != c {
			t.Fatalf("StartRun = %+v", r)
		}
		started = append(started, r)
		clk.Advance(time.Minute)
	}
	// An unfinished run is visible as the last one.
	if last, ok, _ := s.Runs.Last("pg"); !ok || last.ID != 5 || !last.FinishedAt.IsZero() {
		t.Fatalf("LastRun(pg) = %+v, %v", last, ok)
	}
	fin := started[3]
	fin.Created, fin.Updated, fin.Unchanged, fin.Deleted, fin.Failed, fin.Adopted, fin.Held = 1, 2, 3, 4, 5, 6, 7
	fin.APICalls, fin.Err = 1234, "stopped: mass delete"
	must(t, s.Runs.Finish(fin))

	s = reopen(t, s, clk)
	tests := []struct {
		connector string
		limit     int
		want      []uint64
	}{
		{"crm", 0, []uint64{4, 3, 1}},
		{"crm", 2, []uint64{4, 3}},
		{"pg", 10, []uint64{5, 2}},
		{"", 3, []uint64{5, 4, 3}},
		{"", -1, []uint64{5, 4, 3, 2, 1}},
		{"none", 5, nil},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s limit %d", tt.connector, tt.limit), func(t *testing.T) {
			runs, err := s.Runs.List(tt.connector, tt.limit)
			must(t, err)
			var ids []uint64
			for _, r := range runs {
				ids = append(ids, r.ID)
			}
			if !reflect.DeepEqual(ids, tt.want) {
				t.Fatalf("ids = %v, want %v", ids, tt.want)
			}
		})
	}
	last, ok, err := s.Runs.Last("crm")
	must(t, err)
	if !ok || last.ID != 4 || last.Adopted != 6 || last.Held != 7 || last.APICalls != 1234 ||
		last.Err != "stopped: mass delete" || !last.FinishedAt.Equal(clk.Now()) || last.Kind != "run" {
		t.Fatalf("LastRun(crm) = %+v", last)
	}
	if _, ok, _ := s.Runs.Last("none"); ok {
		t.Error("LastRun of a connector that never ran")
	}
	if err := s.Runs.Finish(Run{ID: 99, Connector: "crm"}); !errors.Is(err, ErrNotFound) {
		t.Errorf("FinishRun(unknown) = %v", err)
	}
	if err := s.Runs.Finish(Run{ID: 1, Connector: "pg"}); err == nil {
		t.Error("FinishRun moved a run to another connector")
	}
	if _, err := s.Runs.Start("", "run"); err == nil {
		t.Error("StartRun without connector")
	}
}

func TestPruneRuns(t *testing.T) {
	s, _ := openTest(t)
	for range 10 {
		for _, c := range []string{"crm", "pg"} {
			_, err := s.Runs.Start(c, "run")
			must(t, err)
		}
	}
	n, err := s.Runs.Prune(3)
	if err != nil || n != 14 {
		t.Fatalf("PruneRuns = %d, %v; want 14", n, err)
	}
	for _, c := range []string{"crm", "pg"} {
		runs, _ := s.Runs.List(c, 0)
		if len(runs) != 3 || runs[0].ID < 19 {
			t.Errorf("%s runs after prune: %+v", c, runs)
		}
	}
	if all, _ := s.Runs.List("", 0); len(all) != 6 {
		t.Errorf("%d runs in all", len(all))
	}
	// New runs keep increasing ids after a prune.
	r, _ := s.Runs.Start("crm", "resync")
	if r.ID != 21 {
		t.Errorf("id after prune = %d", r.ID)
	}
}

func TestConflictJournal(t *testing.T) {
	s, clk := openTest(t)
	add := func(c, ext string) uint64 {
		id, err := s.Conflicts.Add(Conflict{Connector: c, ExternalID: ext, ContactID: "CT" + ext,
			Policy: "newest-wins", Winner: "workspace",
			Workspace: map[string]string{"firstName": "Ada"}, Source: map[string]string{"firstName": "Adele"}})
		must(t, err)
		clk.Advance(time.Second)
		return id
	}
	add("crm", "1")
	add("pg", "2")
	add("crm", "3")
	s = reopen(t, s, clk)

	tests := []struct {
		connector string
		limit     int
		want      []string
	}{
		{"crm", 0, []string{"3", "1"}},
		{"crm", 1, []string{"3"}},
		{"", 0, []string{"3", "2", "1"}},
		{"none", 0, nil},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s limit %d", tt.connector, tt.limit), func(t *testing.T) {
			cs, err := s.Conflicts.List(tt.connector, tt.limit)
			must(t, err)
			var got []string
			for _, c := range cs {
				got = append(got, c.ExternalID)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("conflicts = %v, want %v", got, tt.want)
			}
		})
	}
	cs, _ := s.Conflicts.List("crm", 1)
	c := cs[0]
	if c.ContactID != "CT3" || c.Policy != "newest-wins" || c.Winner != "workspace" ||
		c.Workspace["firstName"] != "Ada" || c.Source["firstName"] != "Adele" || c.At.IsZero() || c.ID != 3 {
		t.Errorf("conflict = %+v", c)
	}
	for connector, want := range map[string]int{"": 3, "crm": 2, "pg": 1, "none": 0} {
		if n, _ := s.Conflicts.Count(connector); n != want {
			t.Errorf("CountConflicts(%q) = %d, want %d", connector, n, want)
		}
	}
	if n, err := s.Conflicts.Prune(1); err != nil || n != 1 {
		t.Errorf("PruneConflicts = %d, %v", n, err)
	}
	if n, _ := s.Conflicts.Count("crm"); n != 1 {
		t.Errorf("crm conflicts after prune = %d", n)
	}
}
