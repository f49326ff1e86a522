package main

import (
	"strings"
	"testing"
)

// The demos are the README's first command: what they print must stay
// true, so the test checks the counts they claim.
func TestDemos(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want []string
	}{
		{name: "csv one way", args: []string{"demo", "--dir", "", "--rows", "25"}, want: []string{
			"created=25 updated=0",
			"4. Second sync, nothing changed: no write at all\n   created=0 updated=0 unchanged=25",
			"created=1 updated=2 unchanged=22 deleted=1",
			"1 POST, 2 PATCH, 1 DELETE",
		}},
		{name: "hubspot both ways", args: []string{"demo", "--dir", "", "--crm", "hubspot", "--rows", "10"}, want: []string{
			"created=10 updated=0",
			"reached HubSpot: true",
			"in 1 batch/update call(s)",
			"recognised as syncd's own writes, 0 PATCH",
			"1 PATCH to the workspace; its webhook came back as an echo and was dropped: 0 HubSpot writes",
		}},
		{name: "pipedrive both ways", args: []string{"demo", "--dir", "", "--crm", "pipedrive", "--rows", "25"}, want: []string{
			"created=25 updated=0",
			"reached Pipedrive: true",
			"in 3 PATCH; every unmapped home address kept: true",
			"recognised as syncd's own writes, 0 PATCH",
			"unchanged=1 deleted=2",
			"0 answered 429",
			"burst requests (2 s window):",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.args[2] = t.TempDir()
			out, _, err := runMain(t, tt.args...)
			if err != nil {
				t.Fatalf("demo: %v\n%s", err, out)
			}
			for _, w := range tt.want {
				if !strings.Contains(out, w) {
					t.Errorf("demo output lacks %q:\n%s", w, out)
				}
			}
		})
	}
}
