package connector

import "testing"

func TestQuotaRemaining(t *testing.T) {
	for _, tc := range []struct {
		name string
		q    Quota
		want int64
	}{
		{"unknown limit", Quota{Used: 10}, -1},
		{"no budget of syncd's own", Quota{Used: 400, Limit: 1000}, 600},
		{"half of the allowance", Quota{Used: 400, Limit: 1000, Budget: 0.5}, 100},
		{"budget spent", Quota{Used: 700, Limit: 1000, Budget: 0.5}, 0},
		{"whole allowance as budget", Quota{Used: 10, Limit: 100, Budget: 1}, 90},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.q.Remaining(); got != tc.want {
				t.Errorf("Remaining() = %d, want %d", got, tc.want)
			}
		})
	}
}
