package progress

import "testing"

func TestSnapshotString(t *testing.T) {
	total, eta := int64(12000), 95.4
	for _, tc := range []struct {
		name string
		s    Snapshot
		want string
	}{
		{"unknown total", Snapshot{Done: 1500, RatePerSecond: 9.96, Writes: map[string]int64{}, APICalls: 1501},
			"1,500 records, total unknown · 10.0 records/s · time left unknown · 1,501 API calls"},
		{"estimated total", Snapshot{Done: 3000, Total: &total, TotalIsEstimate: true, RatePerSecond: 94.33, ETASeconds: &eta,
			Writes: map[string]int64{"unchanged": 10, "updated": 2, "created": 2988}, APICalls: 3050},
			"3,000 of about 12,000 records (25%) · 94.3 records/s · about 1m35s left · created 2,988, updated 2, unchanged 10 · 3,050 API calls"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.s.String(); got != tc.want {
				t.Errorf("String() =\n%s\nwant\n%s", got, tc.want)
			}
		})
	}
	for n, want := range map[int64]string{0: "0", 999: "999", 1000: "1,000", -1234567: "-1,234,567"} {
		if got := Thousands(n); got != want {
			t.Errorf("Thousands(%d) = %q, want %q", n, got, want)
		}
	}
}
