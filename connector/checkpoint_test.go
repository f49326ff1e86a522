package connector

import (
	"strings"
	"testing"
	"time"
)

type testCheckpoint struct {
	Since  time.Time        `json:"since,omitzero"`
	After  string           `json:"after,omitempty"`
	Recent map[string]int64 `json:"recent,omitempty"`
}

func TestCheckpointRoundTrip(t *testing.T) {
	cp := testCheckpoint{Since: time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC), After: "42", Recent: map[string]int64{"7": 1}}
	s := EncodeCheckpoint(cp)
	if s != `{"since":"2026-03-02T09:00:00Z","after":"42","recent":{"7":1}}` {
		t.Errorf("encoded %s", s)
	}
	got, err := DecodeCheckpoint[testCheckpoint]("demo", s)
	if err != nil || !got.Since.Equal(cp.Since) || got.After != "42" || got.Recent["7"] != 1 {
		t.Errorf("decoded %+v, %v", got, err)
	}
}

func TestDecodeCheckpoint(t *testing.T) {
	for _, tc := range []struct {
		name, in, err string
	}{
		{name: "start", in: ""},
		{name: "empty object", in: "{}"},
		{name: "not JSON", in: "12:00", err: `parse demo checkpoint "12:00": `},
		{name: "wrong type", in: `{"after":5}`, err: `parse demo checkpoint "{\"after\":5}": `},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := DecodeCheckpoint[testCheckpoint]("demo", tc.in)
			if tc.err == "" {
				if err != nil || got.After != "" || !got.Since.IsZero() {
					t.Errorf("= %+v, %v; want the zero checkpoint", got, err)
				}
				return
			}
			if err == nil || !strings.HasPrefix(err.Error(), tc.err) {
				t.Errorf("error %v, want it to start %q", err, tc.err)
			}
		})
	}
}
