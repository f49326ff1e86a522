package connector

import (
	"errors"
	"strings"
	"testing"
)

type prepSettings struct{ problems []error }

func (p *prepSettings) Validate() []error { return p.problems }

type otherSettings struct{}

func (otherSettings) Validate() []error { return nil }

func TestPrepare(t *testing.T) {
	set, log, err := Prepare[*prepSettings](Options{Name: "crm", Settings: &prepSettings{}}, "demo")
	if err != nil || set == nil || log.Data["connector"] != "crm" || log.Data["type"] != "demo" {
		t.Fatalf("Prepare of good settings = %v, %v, %v", set, log, err)
	}
	for _, tc := range []struct {
		name string
		set  Settings
		want string
	}{
		{"other type", otherSettings{}, "open demo connector crm: settings are connector.otherSettings, not *connector.prepSettings"},
		{"nil", (*prepSettings)(nil), "settings are *connector.prepSettings, not *connector.prepSettings"},
		{"problems", &prepSettings{problems: []error{errors.New("a: required"), errors.New("b: bad")}}, "open demo connector crm: a: required\nb: bad"},
	} {
		if _, _, err := Prepare[*prepSettings](Options{Name: "crm", Settings: tc.set}, "demo"); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
}
