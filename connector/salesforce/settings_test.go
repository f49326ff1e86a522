package salesforce

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"strings"
	"testing"
)

func testKey(t *testing.T) (*rsa.PrivateKey, string) {
	t.Helper()
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(k)
	if err != nil {
		t.Fatal(err)
	}
	return k, string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}))
}

func TestSettingsValidate(t *testing.T) {
	_, key := testKey(t)
	valid := func() *Settings {
		s := NewSettings()
		s.LoginURL, s.ClientID, s.ClientSecret = "https://acme.my.salesforce.com", "key", "secret"
		return s
	}
	for _, tc := range []struct {
		name string
		mod  func(*Settings)
		want []string // substrings of the problems, in order; none means valid
	}{
		{name: "defaults with a client secret", mod: func(*Settings) {}},
		{name: "jwt bearer", mod: func(s *Settings) { s.ClientSecret, s.Username, s.PrivateKey = "", "sync@acme.com", Secret(key) }},
		{name: "lead", mod: func(s *Settings) { s.Object = "lead" }},
		{name: "nothing set", mod: func(s *Settings) { *s = *NewSettings() }, want: []string{"loginURL: ", "clientId: required", "clientSecret: required"}},
		{name: "both flows", mod: func(s *Settings) { s.Username, s.PrivateKey = "u", Secret(key) }, want: []string{"not both"}},
		{name: "key without user", mod: func(s *Settings) { s.ClientSecret, s.PrivateKey = "", Secret(key) }, want: []string{"username: required"}},
		{name: "not a key", mod: func(s *Settings) { s.ClientSecret, s.Username, s.PrivateKey = "", "u", "abc" }, want: []string{"privateKey: not a PEM block"}},
		{name: "login URL with a path", mod: func(s *Settings) { s.LoginURL = "https://acme.my.salesforce.com/services/oauth2/token" }, want: []string{"loginURL: "}},
		{name: "bad version", mod: func(s *Settings) { s.APIVersion = "62" }, want: []string{"apiVersion: \"62\" is not"}},
		{name: "old version", mod: func(s *Settings) { s.APIVersion = "41.0" }, want: []string{"older than 42.0"}},
		{name: "account", mod: func(s *Settings) { s.Object = "Account" }, want: []string{"object: \"Account\" is not one of Contact, Lead"}},
		{name: "budget", mod: func(s *Settings) { s.DailyBudget = 1.5 }, want: []string{"dailyBudget: 1.5"}},
		{name: "zero budget", mod: func(s *Settings) { s.DailyBudget = 0 }, want: []string{"dailyBudget: 0"}},
		{name: "page size", mod: func(s *Settings) { s.PageSize = 100 }, want: []string{"pageSize: 100 is not between 200 and 2000"}},
		{name: "audience", mod: func(s *Settings) { s.Audience = "login.salesforce.com" }, want: []string{"audience: "}},
		{name: "negative settle and rate", mod: func(s *Settings) { s.Settle, s.RateLimit = -1, 0 }, want: []string{"settle: ", "rateLimit: "}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := valid()
			tc.mod(s)
			errs := s.Validate()
			if len(errs) != len(tc.want) {
				t.Fatalf("Validate() = %v, want %d problems %q", errs, len(tc.want), tc.want)
			}
			for i, w := range tc.want {
				if !strings.Contains(errs[i].Error(), w) {
					t.Errorf("problem %d = %q, want it to contain %q", i, errs[i], w)
				}
			}
			if msg := fmt.Sprint(errors.Join(errs...)); strings.Contains(msg, "secret") && strings.Contains(msg, "BEGIN") {
				t.Errorf("a problem shows the key: %s", msg)
			}
		})
	}
}

func TestSecretsNeverPrint(t *testing.T) {
	s := valid2()
	for _, out := range []string{fmt.Sprint(s.ClientSecret), fmt.Sprintf("%v %+v %#v", *s, *s, *s)} {
		if strings.Contains(out, "top-secret") {
			t.Errorf("a secret printed: %s", out)
		}
	}
}

func valid2() *Settings {
	s := NewSettings()
	s.LoginURL, s.ClientID, s.ClientSecret = "https://acme.my.salesforce.com", "top-secret-id", "top-secret"
	return s
}

func TestParseLimitInfo(t *testing.T) {
	for _, tc := range []struct {
		in          string
		used, limit int64
		ok          bool
	}{
		{"api-usage=18/5000", 18, 5000, true},
		{"api-usage=10018/100000, per-app-api-usage=17/250(appName=sample-app)", 10018, 100000, true},
		{"per-app-api-usage=17/250(appName=x), api-usage=3/15000", 3, 15000, true},
		{"", 0, 0, false},
		{"api-usage=x/5000", 0, 0, false},
		{"api-usage=5/0", 0, 0, false},
	} {
		used, limit, ok := parseLimitInfo(tc.in)
		if used != tc.used || limit != tc.limit || ok != tc.ok {
			t.Errorf("parseLimitInfo(%q) = %d, %d, %v; want %d, %d, %v", tc.in, used, limit, ok, tc.used, tc.limit, tc.ok)
		}
	}
}

func TestJWTAudience(t *testing.T) {
	for login, want := range map[string]string{
		"https://acme.my.salesforce.com":              "https://login.salesforce.com",
		"https://login.salesforce.com":                "https://login.salesforce.com",
		"https://test.salesforce.com":                 "https://test.salesforce.com",
		"https://acme--uat.sandbox.my.salesforce.com": "https://test.salesforce.com",
	} {
		s := NewSettings()
		s.LoginURL = login
		if got := s.audience(); got != want {
			t.Errorf("audience for %s = %s, want %s", login, got, want)
		}
	}
}

func TestValuesConvert(t *testing.T) {
	if got := value(1000000.0); got != "1000000" {
		t.Errorf("value(1e6) = %v", got)
	}
	if got := value(true); got != "true" {
		t.Errorf("value(true) = %v", got)
	}
	for _, tc := range []struct {
		typ  string
		in   any
		want any
	}{
		{"double", "12.5", json.Number("12.5")},
		{"int", " 7 ", json.Number("7")},
		{"double", "twelve", "twelve"},
		{"boolean", "true", true},
		{"string", "true", "true"},
		{"double", nil, nil},
	} {
		if got := typed(tc.typ, tc.in); got != tc.want {
			t.Errorf("typed(%s, %#v) = %#v, want %#v", tc.typ, tc.in, got, tc.want)
		}
	}
}
