package mysql

import (
	"testing"
	"time"
)

// TestWallBound: the latest cursor text a checkpoint may hold for rows
// stamped from an instant on is that instant's local time, except in the
// hours before clocks go back, when the rows of the repeated hour stamp
// earlier local times: then it is the instant at the later offset.
func TestWallBound(t *testing.T) {
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Fatal(err)
	}
	west, _ := parseOffset("-07:00")
	tests := []struct {
		name string
		loc  *time.Location
		at   time.Time // UTC
		want string
	}{
		{name: "fixed offset west", loc: west, at: time.Date(2026, 10, 25, 0, 30, 0, 0, time.UTC), want: "2026-10-24 17:30:00.000000"},
		{name: "summer, no change near", loc: berlin, at: time.Date(2026, 7, 1, 10, 0, 0, 0, time.UTC), want: "2026-07-01 12:00:00.000000"},
		// Clocks go back from 03:00 CEST to 02:00 CET at 01:00 UTC on 25 October 2026.
		{name: "an hour before clocks go back", loc: berlin, at: time.Date(2026, 10, 25, 0, 0, 0, 0, time.UTC), want: "2026-10-25 01:00:00.000000"},
		{name: "half an hour before clocks go back", loc: berlin, at: time.Date(2026, 10, 25, 0, 30, 0, 0, time.UTC), want: "2026-10-25 01:30:00.000000"},
		{name: "during the repeated hour", loc: berlin, at: time.Date(2026, 10, 25, 1, 30, 0, 0, time.UTC), want: "2026-10-25 02:30:00.000000"},
		{name: "clocks go forward: no earlier stamps", loc: berlin, at: time.Date(2026, 3, 29, 0, 30, 0, 0, time.UTC), want: "2026-03-29 01:30:00.000000"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := wallBound(tt.loc, tt.at)
			if got != tt.want {
				t.Fatalf("wallBound = %s, want %s", got, tt.want)
			}
			// No instant from at on stamps a local time before the bound.
			for d := time.Duration(0); d <= 4*time.Hour; d += time.Minute {
				if stamp := tt.at.Add(d).In(tt.loc).Format(cursorText); stamp < got {
					t.Fatalf("%v later stamps %s, before the bound %s", d, stamp, got)
				}
			}
		})
	}
}

// TestServerZoneLocation: the server's global zone as a Go location, and
// whether it is exact.
func TestServerZoneLocation(t *testing.T) {
	tests := []struct {
		name      string
		z         serverZone
		wantName  string
		wantExact bool
	}{
		{name: "offset west", z: serverZone{global: "-07:00", system: "UTC", offset: -7 * time.Hour}, wantName: "-07:00", wantExact: true},
		{name: "offset east", z: serverZone{global: "+09:00", system: "UTC", offset: 9 * time.Hour}, wantName: "+09:00", wantExact: true},
		{name: "SYSTEM in UTC", z: serverZone{global: "SYSTEM", system: "UTC"}, wantName: "UTC", wantExact: true},
		{name: "SYSTEM by abbreviation", z: serverZone{global: "SYSTEM", system: "PDT", offset: -7 * time.Hour}, wantName: "SYSTEM (PDT)", wantExact: false},
		{name: "SYSTEM CET is an abbreviation too", z: serverZone{global: "SYSTEM", system: "CET", offset: time.Hour}, wantName: "SYSTEM (CET)", wantExact: false},
		{name: "a name Go knows, at its offset", z: serverZone{global: "Asia/Tokyo", offset: 9 * time.Hour}, wantName: "Asia/Tokyo", wantExact: true},
		{name: "a name whose offset disagrees", z: serverZone{global: "Asia/Tokyo", offset: 8 * time.Hour}, wantName: "Asia/Tokyo", wantExact: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			loc, exact := tt.z.location()
			if loc.String() != tt.wantName || exact != tt.wantExact {
				t.Fatalf("location = %s, exact %v; want %s, exact %v", loc, exact, tt.wantName, tt.wantExact)
			}
			if off := offsetAt(loc, time.Now()); off != tt.z.offset {
				t.Fatalf("offset %v, want the server's %v", off, tt.z.offset)
			}
		})
	}
}

// TestParseOffset reads offsets as MySQL writes them and nothing else.
func TestParseOffset(t *testing.T) {
	for in, want := range map[string]time.Duration{"+09:00": 9 * time.Hour, "-07:00": -7 * time.Hour, "+05:30": 5*time.Hour + 30*time.Minute, "+00:00": 0} {
		loc, ok := parseOffset(in)
		if !ok || offsetAt(loc, time.Now()) != want || loc.String() != in {
			t.Errorf("parseOffset(%q) = %v, %v; want %v", in, loc, ok, want)
		}
	}
	for _, in := range []string{"", "UTC", "Europe/Berlin", "09:00", "+9", "+25:00", "+09:75"} {
		if _, ok := parseOffset(in); ok {
			t.Errorf("parseOffset(%q) accepted", in)
		}
	}
}
