package fakeapi

import "testing"

func TestCountsAndFaults(t *testing.T) {
	c := NewCounts[string]()
	c.Add("GET /a", 200)
	c.Add("GET /a", 429)
	c.Add("POST /b", 429)
	snap := c.Clone()
	c.Add("GET /a", 200)
	if snap.Requests["GET /a"] != 2 || snap.Responses["GET /a"][200] != 1 || c.Requests["GET /a"] != 3 {
		t.Errorf("clone %+v follows later counts %+v", snap, c)
	}
	if n := c.RateLimited(); n != 2 {
		t.Errorf("RateLimited = %d, want 2", n)
	}
	q := Faults[string, int]{}
	q.Push("GET /a", 500, 502)
	if f, ok := q.Pop("GET /a"); !ok || f != 500 {
		t.Errorf("first fault %d %v", f, ok)
	}
	if f, ok := q.Pop("GET /a"); !ok || f != 502 {
		t.Errorf("second fault %d %v", f, ok)
	}
	if _, ok := q.Pop("GET /a"); ok {
		t.Error("a third fault")
	}
}
