package hubspot

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/syncd-io/syncd/connector"
)

func TestSettingsValidate(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(*Settings)
		want []string // the keys named by the problems, in order
	}{
		{"defaults with a token", func(s *Settings) {}, nil},
		{"no token", func(s *Settings) { s.Token = "  " }, []string{"token"}},
		{"bad URL", func(s *Settings) { s.BaseURL = "api.hubapi.com" }, []string{"baseURL"}},
		{"limits", func(s *Settings) { s.RateLimit, s.SearchRateLimit = 0, -1 }, []string{"rateLimit", "searchRateLimit"}},
		{"page size", func(s *Settings) { s.PageSize = 201 }, []string{"pageSize"}},
		{"durations", func(s *Settings) { s.Lookback, s.ArchivedInterval = -time.Second, -time.Hour }, []string{"lookback", "archivedInterval"}},
		{"property names", func(s *Settings) { s.Properties = []string{"email", "", "a,b"} }, []string{"properties[1]", "properties[2]"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := NewSettings()
			s.Token = "pat-x"
			tc.edit(s)
			errs := s.Validate()
			if len(errs) != len(tc.want) {
				t.Fatalf("problems %v, want on %v", errs, tc.want)
			}
			for i, e := range errs {
				if !strings.HasPrefix(e.Error(), tc.want[i]+":") {
					t.Errorf("problem %q, want one on %s", e, tc.want[i])
				}
			}
		})
	}
}

func TestRegisteredType(t *testing.T) {
	typ, ok := connector.Lookup("hubspot")
	if !ok || !typ.Writable || !typ.Incremental || typ.SoftDelete {
		t.Fatalf("type %+v", typ)
	}
	s, ok := typ.NewSettings().(*Settings)
	if !ok || s.RateLimit != DefaultRateLimit || s.PageSize != MaxPageSize || s.Lookback != DefaultLookback || s.BaseURL != DefaultBaseURL {
		t.Fatalf("default settings %+v", s)
	}
}

func TestOpenProperties(t *testing.T) {
	for _, tc := range []struct {
		name     string
		settings []string
		fields   []string
		want     string
	}{
		{"settings win", []string{"email", "phone", "email"}, []string{"firstname"}, "hs_object_id,lastmodifieddate,email,phone"},
		{"mapping fields", nil, []string{"firstname", "hs_object_id"}, "hs_object_id,lastmodifieddate,firstname"},
		{"defaults", nil, nil, "hs_object_id,lastmodifieddate," + strings.Join(defaultProperties, ",")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			set := NewSettings()
			set.Token, set.Properties = "pat-x", tc.settings
			src, err := Open(context.Background(), connector.Options{Name: "x", Settings: set, Fields: tc.fields})
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Join(src.Properties(), ","); got != tc.want {
				t.Errorf("properties %s, want %s", got, tc.want)
			}
		})
	}
	// Too many properties for a search body.
	set := NewSettings()
	set.Token = "pat-x"
	for i := range 200 {
		set.Properties = append(set.Properties, "custom_property_"+strings.Repeat("x", i%5))
		set.Properties[i] += string(rune('a'+i%26)) + strings.Repeat("y", i/26)
	}
	if _, err := Open(context.Background(), connector.Options{Name: "x", Settings: set}); err == nil || !strings.Contains(err.Error(), "3000") {
		t.Errorf("open with 200 properties: %v, want the search body limit", err)
	}
}
