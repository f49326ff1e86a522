package config

import (
	"errors"
	"strings"
	"testing"
)

// Schedules that cron accepts but would run wrongly are refused with the
// reason, as one problem naming the connector's schedule key.
func TestScheduleRefusals(t *testing.T) {
	tests := []struct {
		name     string
		schedule string
		wantMsg  string // "" means valid
	}{
		{"default", "@every 5m", ""},
		{"one second", "@every 1s", ""},
		{"hourly", "@hourly", ""},
		{"every five minutes", "*/5 * * * *", ""},
		{"step equal to the field", "*/60 * * * *", ""},
		{"leap day", "0 0 29 2 *", ""},
		{"with a time zone", "CRON_TZ=Europe/Berlin 0 6 * * 1-5", ""},
		{"negative interval", "@every -5m", "interval -5m is negative"},
		{"zero interval", "@every 0s", "interval 0s is zero"},
		{"below the floor", "@every 1ms", "interval 1ms is below the floor of 1s"},
		{"minute step out of range", "*/61 * * * *", "step 61 of the minute field is out of range (at most 60)"},
		{"hour step out of range", "0 1-23/25 * * *", "step 25 of the hour field is out of range (at most 24)"},
		{"31st of February", "0 0 31 2 *", "never fires"},
		{"30th of February with a time zone", "TZ=UTC 0 0 30 2 *", "never fires"},
		{"not a spec", "every five minutes", "invalid schedule"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc := `
workspace: {baseURL: "https://api.example.com", apiKey: k}
connectors:
  - name: crm
    type: dbtest
    schedule: "` + tt.schedule + `"
    settings: {table: t}
    mapping: {fields: {firstName: n}}
`
			c, err := ParseConfig([]byte(doc), nil)
			if tt.wantMsg == "" {
				if err != nil {
					t.Fatal(err)
				}
				if c.Connectors[0].Schedule != tt.schedule {
					t.Errorf("schedule = %q", c.Connectors[0].Schedule)
				}
				return
			}
			var ve *ValidationError
			if !errors.As(err, &ve) || len(ve.Problems) != 1 {
				t.Fatalf("err = %v, want one problem", err)
			}
			p := ve.Problems[0]
			if p.Path != "connectors[crm].schedule" || !strings.Contains(p.Message, tt.wantMsg) ||
				!strings.Contains(p.Message, tt.schedule) {
				t.Errorf("problem = %+v, want connectors[crm].schedule naming %q and %q", p, tt.schedule, tt.wantMsg)
			}
		})
	}
}
