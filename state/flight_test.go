package state

import (
	"testing"
	"time"
)

func TestFlightsAreKeptForAWhile(t *testing.T) {
	s, clk := openTest(t)
	f := Flight{Seq: 7, Answer: time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC), Wrote: map[string]string{"firstName": "Ann"}}
	s.Reverse.PutFlight("db", "c1", f)
	got, ok := s.Reverse.FlightOf("db", "c1")
	if !ok || got.Seq != 7 || got.Wrote["firstName"] != "Ann" {
		t.Fatalf("FlightOf = %+v, %v; want the flight put", got, ok)
	}
	if _, ok := s.Reverse.FlightOf("other", "c1"); ok {
		t.Fatal("another connector's flight found")
	}
	clk.Advance(flightTTL + time.Minute)
	s.Reverse.PutFlight("db", "c2", f) // prunes
	if _, ok := s.Reverse.FlightOf("db", "c1"); ok {
		t.Error("a flight older than its TTL is still kept")
	}
	if _, ok := s.Reverse.FlightOf("db", "c2"); !ok {
		t.Error("the new flight is not kept")
	}
}
