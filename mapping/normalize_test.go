package mapping

import (
	"errors"
	"testing"
	"time"
)

func TestNormalizePhone(t *testing.T) {
	tests := []struct {
		name, in, region, want string
		wantErr                bool
	}{
		{name: "empty stays empty", in: "  ", want: ""},
		{name: "US national with punctuation", in: "(415) 555-0100", want: "+14155550100"},
		{name: "US dotted", in: "415.555.0100", want: "+14155550100"},
		{name: "international with spaces", in: "+1 415 555 0100", want: "+14155550100"},
		{name: "already E.164", in: "+14155550100", want: "+14155550100"},
		{name: "region GB", in: "020 7946 0958", region: "GB", want: "+442079460958"},
		{name: "region lower case", in: "020 7946 0958", region: "gb", want: "+442079460958"},
		{name: "explicit country beats region", in: "+33 1 23 45 67 89", region: "US", want: "+33123456789"},
		{name: "00 prefix in FR", in: "0033 1 23 45 67 89", region: "FR", want: "+33123456789"},
		{name: "too short", in: "12", wantErr: true},
		{name: "letters", in: "call me", wantErr: true},
		{name: "too long", in: "+1 415 555 0100 1234 5678", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := NormalizePhone(tt.in, tt.region)
			if tt.wantErr {
				if !errors.Is(err, ErrInvalidPhone) {
					t.Fatalf("NormalizePhone(%q) = %q, %v; want ErrInvalidPhone", tt.in, got, err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("NormalizePhone(%q, %q) = %q, %v; want %q", tt.in, tt.region, got, err, tt.want)
			}
		})
	}
}

func TestNormalizeEmail(t *testing.T) {
	tests := []struct {
		name, in, want string
		wantErr        bool
	}{
		{name: "empty", in: "", want: ""},
		{name: "lower-cased whole", in: " Ann.Lee@Example.COM ", want: "ann.lee@example.com"},
		{name: "display name dropped", in: "Ann Lee <ann@example.com>", want: "ann@example.com"},
		{name: "plus tag kept", in: "ann+crm@example.com", want: "ann+crm@example.com"},
		{name: "no at", in: "ann.example.com", wantErr: true},
		{name: "no domain", in: "ann@", wantErr: true},
		{name: "two addresses", in: "a@x.com, b@x.com", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := NormalizeEmail(tt.in)
			if tt.wantErr {
				if !errors.Is(err, ErrInvalidEmail) {
					t.Fatalf("NormalizeEmail(%q) = %q, %v; want ErrInvalidEmail", tt.in, got, err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("NormalizeEmail(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
			}
		})
	}
}

func TestToValueConversions(t *testing.T) {
	tests := []struct {
		name     string
		in       any
		want     string
		wantList []string
	}{
		{name: "nil", in: nil, want: ""},
		{name: "string", in: " x ", want: " x "},
		{name: "int64", in: int64(-42), want: "-42"},
		{name: "float64 integral", in: float64(3), want: "3"},
		{name: "float64 shortest", in: 0.1, want: "0.1"},
		{name: "large float not exponent", in: 1e21, want: "1000000000000000000000"},
		{name: "bool", in: true, want: "true"},
		{name: "time in UTC", in: time.Date(2024, 3, 1, 10, 0, 0, 0, time.FixedZone("CET", 3600)), want: "2024-03-01T09:00:00Z"},
		{name: "time with fraction", in: time.Date(2024, 3, 1, 9, 0, 0, 500, time.UTC), want: "2024-03-01T09:00:00.0000005Z"},
		{name: "list", in: []string{"b", "a"}, wantList: []string{"b", "a"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := toValue(tt.in)
			if tt.wantList != nil {
				if !v.isList || len(v.list) != len(tt.wantList) || v.list[0] != tt.wantList[0] {
					t.Fatalf("toValue(%v) = %+v, want list %v", tt.in, v, tt.wantList)
				}
				return
			}
			if v.isList || v.s != tt.want {
				t.Fatalf("toValue(%v) = %+v, want %q", tt.in, v, tt.want)
			}
		})
	}
}

func TestValidateSource(t *testing.T) {
	tests := []struct {
		source string
		ok     bool
	}{
		{"custom-crm", true},
		{"custom-hubspot", true},
		{"public-api", true},
		{"device", false},
		{"CSV", false},
		{"csv-import", false},
		{"other", false},
		{"zapier", false},
		{"google-people", false},
		{"openphone", false},
		{"OpenPhone-sync", false},
		{"", false},
		{string(make([]byte, 73)), false},
	}
	for _, tt := range tests {
		t.Run(tt.source, func(t *testing.T) {
			if err := ValidateSource(tt.source); (err == nil) != tt.ok {
				t.Fatalf("ValidateSource(%q) = %v, want ok=%v", tt.source, err, tt.ok)
			}
		})
	}
}
