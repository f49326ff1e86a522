package policy

import (
	"encoding"
	"errors"
	"reflect"
	"testing"

	"gopkg.in/yaml.v3"
)

// textValue is a policy as its users see it.
type textValue interface {
	encoding.TextUnmarshaler
	String() string
	Valid() bool
}

func TestUnmarshalText(t *testing.T) {
	tests := []struct {
		name    string
		into    func() textValue
		text    string
		want    string
		policy  string   // of the *ValueError, when the text is refused
		allowed []string // of the *ValueError
	}{
		{name: "direction to-workspace", into: func() textValue { return new(Direction) }, text: "to-workspace", want: "to-workspace"},
		{name: "direction to-crm", into: func() textValue { return new(Direction) }, text: "to-crm", want: "to-crm"},
		{name: "direction both", into: func() textValue { return new(Direction) }, text: "both", want: "both"},
		{name: "direction two-way", into: func() textValue { return new(Direction) }, text: "two-way",
			policy: "direction", allowed: []string{"to-workspace", "to-crm", "both"}},
		{name: "direction in capitals", into: func() textValue { return new(Direction) }, text: "Both",
			policy: "direction", allowed: []string{"to-workspace", "to-crm", "both"}},
		{name: "conflict newest-wins", into: func() textValue { return new(Conflict) }, text: "newest-wins", want: "newest-wins"},
		{name: "conflict workspace-wins", into: func() textValue { return new(Conflict) }, text: "workspace-wins", want: "workspace-wins"},
		{name: "conflict crm-wins", into: func() textValue { return new(Conflict) }, text: "crm-wins", want: "crm-wins"},
		{name: "conflict last-wins", into: func() textValue { return new(Conflict) }, text: "last-wins",
			policy: "conflict policy", allowed: []string{"newest-wins", "workspace-wins", "crm-wins"}},
		{name: "delete ignore", into: func() textValue { return new(Delete) }, text: "ignore", want: "ignore"},
		{name: "delete unlink", into: func() textValue { return new(Delete) }, text: "unlink", want: "unlink"},
		{name: "delete delete", into: func() textValue { return new(Delete) }, text: "delete", want: "delete"},
		{name: "delete with a space", into: func() textValue { return new(Delete) }, text: " delete",
			policy: "delete policy", allowed: []string{"ignore", "unlink", "delete"}},
		{name: "create ignore", into: func() textValue { return new(Create) }, text: "ignore", want: "ignore"},
		{name: "create create", into: func() textValue { return new(Create) }, text: "create", want: "create"},
		{name: "create yes", into: func() textValue { return new(Create) }, text: "yes",
			policy: "create policy", allowed: []string{"ignore", "create"}},
		{name: "match adopt", into: func() textValue { return new(OnMatch) }, text: "adopt", want: "adopt"},
		{name: "match link", into: func() textValue { return new(OnMatch) }, text: "link", want: "link"},
		{name: "match create", into: func() textValue { return new(OnMatch) }, text: "create", want: "create"},
		{name: "match merge", into: func() textValue { return new(OnMatch) }, text: "merge",
			policy: "match policy", allowed: []string{"adopt", "link", "create"}},
		{name: "ambiguous hold", into: func() textValue { return new(OnAmbiguous) }, text: "hold", want: "hold"},
		{name: "ambiguous create", into: func() textValue { return new(OnAmbiguous) }, text: "create", want: "create"},
		{name: "ambiguous pick", into: func() textValue { return new(OnAmbiguous) }, text: "pick",
			policy: "ambiguous-match policy", allowed: []string{"hold", "create"}},
		{name: "empty text", into: func() textValue { return new(OnAmbiguous) }, text: "",
			policy: "ambiguous-match policy", allowed: []string{"hold", "create"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := tt.into()
			err := v.UnmarshalText([]byte(tt.text))
			if tt.policy == "" {
				if err != nil {
					t.Fatalf("UnmarshalText(%q) = %v", tt.text, err)
				}
				if v.String() != tt.want || !v.Valid() {
					t.Errorf("got %q (valid %v), want %q", v.String(), v.Valid(), tt.want)
				}
				return
			}
			var ve *ValueError
			if !errors.As(err, &ve) {
				t.Fatalf("UnmarshalText(%q) = %v, want a *ValueError", tt.text, err)
			}
			if ve.Policy != tt.policy || ve.Value != tt.text || !reflect.DeepEqual(ve.Allowed, tt.allowed) {
				t.Errorf("error = %+v, want policy %q, value %q, allowed %v", ve, tt.policy, tt.text, tt.allowed)
			}
			if v.String() != "" {
				t.Errorf("a refused text was kept: %q", v.String())
			}
		})
	}
}

func TestValueErrorNamesTheAllowedValues(t *testing.T) {
	var d Direction
	err := d.UnmarshalText([]byte("sideways"))
	want := `unknown direction "sideways": use one of: to-workspace, to-crm, both`
	if err == nil || err.Error() != want {
		t.Errorf("err = %v, want %s", err, want)
	}
}

// A policy decodes from YAML through UnmarshalText, and a bad value's
// error names the policy and what is allowed.
func TestYAML(t *testing.T) {
	var v struct {
		Direction Direction `yaml:"direction"`
		Conflict  Conflict  `yaml:"conflict"`
		OnMatch   OnMatch   `yaml:"onMatch"`
	}
	if err := yaml.Unmarshal([]byte("{direction: both, conflict: crm-wins, onMatch: link}"), &v); err != nil {
		t.Fatal(err)
	}
	if v.Direction != Both || v.Conflict != CRMWins || v.OnMatch != MatchLink {
		t.Errorf("decoded %+v", v)
	}
	err := yaml.Unmarshal([]byte("{conflict: last-wins}"), &v)
	var ve *ValueError
	if !errors.As(err, &ve) || ve.Policy != "conflict policy" || len(ve.Allowed) != 3 {
		t.Errorf("err = %v, want the conflict policy's *ValueError", err)
	}
	out, err := yaml.Marshal(v)
	if err != nil || string(out) != "direction: both\nconflict: crm-wins\nonMatch: link\n" {
		t.Errorf("Marshal = %q, %v", out, err)
	}
}

func TestZeroValuesAreNotValid(t *testing.T) {
	for name, v := range map[string]interface{ Valid() bool }{
		"direction": Direction(""), "conflict": Conflict(""), "delete": Delete(""),
		"create": Create(""), "onMatch": OnMatch(""), "onAmbiguous": OnAmbiguous(""),
	} {
		if v.Valid() {
			t.Errorf("%s: \"\" is valid", name)
		}
	}
}

func TestWritesBack(t *testing.T) {
	for d, want := range map[Direction]bool{ToWorkspace: false, ToCRM: true, Both: true, "": false} {
		if got := d.WritesBack(); got != want {
			t.Errorf("%q.WritesBack() = %v, want %v", d, got, want)
		}
	}
}
