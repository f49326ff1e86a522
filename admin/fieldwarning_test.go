package admin

import (
	"encoding/json"
	"strings"
	"testing"
)

// GET /fieldwarnings lists the records synced without a value; they hold
// record values, so a configured token is required.
func TestFieldWarningsEndpoint(t *testing.T) {
	tests := []struct {
		name, token, path string
		hdr               map[string]string
		wantStatus        int
		wantKeys          []string
	}{
		{name: "no token configured", path: "/fieldwarnings", wantStatus: 200, wantKeys: []string{"501"}},
		{name: "by connector", path: "/fieldwarnings?connector=hubspot", wantStatus: 200, wantKeys: []string{"501"}},
		{name: "other connector", path: "/fieldwarnings?connector=crm", wantStatus: 200, wantKeys: []string{}},
		{name: "token configured, none sent", token: testToken, path: "/fieldwarnings", wantStatus: 401},
		{name: "token configured and sent", token: testToken, path: "/fieldwarnings", hdr: map[string]string{"Authorization": "Bearer " + testToken}, wantStatus: 200, wantKeys: []string{"501"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := serve(t, &Server{Daemon: newFake(), Token: tt.token, Log: quietLog()}, "GET", tt.path, nil, tt.hdr)
			if rec.Code != tt.wantStatus {
				t.Fatalf("GET %s = %d %s, want %d", tt.path, rec.Code, rec.Body, tt.wantStatus)
			}
			if tt.wantStatus != 200 {
				return
			}
			var ws []FieldWarning
			if err := json.Unmarshal(rec.Body.Bytes(), &ws); err != nil || ws == nil {
				t.Fatalf("body %s: %v, want a JSON list", rec.Body, err)
			}
			var keys []string
			for _, w := range ws {
				keys = append(keys, w.Key)
				if w.Field != "phoneNumbers.mobile" || w.From != "phone" || w.Value != "<b>n/a</b>" {
					t.Errorf("warning %+v lost data", w)
				}
			}
			if strings.Join(keys, ",") != strings.Join(tt.wantKeys, ",") {
				t.Fatalf("keys %v, want %v", keys, tt.wantKeys)
			}
		})
	}
}

// The health page shows each field warning: its record, field, the
// source's value (escaped) and why.
func TestPageShowsFieldWarnings(t *testing.T) {
	rec := serve(t, &Server{Daemon: newFake(), Log: quietLog()}, "GET", "/", nil, nil)
	html := rec.Body.String()
	for _, want := range []string{`id="fieldwarnings"`, "Fields left out", "<code>501</code>", "phoneNumbers.mobile", "from phone",
		"&lt;b&gt;n/a&lt;/b&gt;", "not a phone number", "3m ago"} {
		if !strings.Contains(html, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	if strings.Contains(html, "<b>n/a") {
		t.Error("page shows the record's value unescaped")
	}
	f := newFake()
	f.warnings = nil
	if html := serve(t, &Server{Daemon: f, Log: quietLog()}, "GET", "/", nil, nil).Body.String(); !strings.Contains(html, "No field left out.") {
		t.Error("page without warnings does not say so")
	}
}
