package mapping

import (
	"testing"
	"text/template"
	"time"

	"github.com/syncd-io/syncd/connector"
)

// TestSimpleTemplateRendersAsTextTemplate: the templates rendered without
// text/template give exactly what it gives, error cases included.
func TestSimpleTemplateRendersAsTextTemplate(t *testing.T) {
	records := []connector.Record{
		{ID: "1", Fields: map[string]any{"id": "7", "the id": "x y", "n": int64(42), "when": time.Unix(5, 0), "tags": []string{"a", "b"}, "none": nil}},
		{ID: "2", Fields: map[string]any{"id": " 8 "}},
		{ID: "3", Fields: map[string]any{}},
	}
	for _, tc := range []struct {
		tmpl   string
		simple bool
	}{
		{"https://crm.example.com/contacts/{{ .id }}", true},
		{"https://x.example/{{.id}}/{{ .n }}?t={{ .when }}&g={{ .tags }}&z={{ .none }}", true},
		{`https://x.example/{{ index . "the id" }}`, true},
		{"https://x.example/static", true},
		{`https://x.example/{{ .id | printf "%s" }}`, false},
		{`https://x.example/{{ if .id }}{{ .id }}{{ end }}`, false},
		{`https://x.example/{{ urlquery .id }}`, false},
	} {
		tmpl := template.Must(template.New("sourceUrl").Option("missingkey=error").Parse(tc.tmpl))
		m := &Mapper{sourceURL: tmpl}
		m.urlParts, m.urlSimple = simpleTemplate(tmpl)
		if m.urlSimple != tc.simple {
			t.Errorf("%s: simple = %v, want %v", tc.tmpl, m.urlSimple, tc.simple)
		}
		slow := &Mapper{sourceURL: tmpl}
		for _, r := range records {
			got, gotErr := m.renderSourceURL(r)
			want, wantErr := slow.renderSourceURL(r)
			if got != want || (gotErr == nil) != (wantErr == nil) ||
				gotErr != nil && gotErr.Error() != wantErr.Error() {
				t.Errorf("%s on record %s: %q, %v; text/template gives %q, %v", tc.tmpl, r.ID, got, gotErr, want, wantErr)
			}
		}
	}
}
