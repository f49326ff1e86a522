package chart

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/syncd-io/syncd/config"
	// The connector types the rendered configurations use.
	_ "github.com/syncd-io/syncd/connector/csv"
	_ "github.com/syncd-io/syncd/connector/hubspot"
	_ "github.com/syncd-io/syncd/connector/pipedrive"
	_ "github.com/syncd-io/syncd/connector/postgres"
	_ "github.com/syncd-io/syncd/connector/salesforce"
)

// TestRenderedConfigValidates parses every rendered syncd.yaml with
// syncd's own configuration parser (defaults, ${VAR} expansion, strict
// decoding, Validate), as `syncd run` will in the pod, and checks what
// the chart sets: the state file on the volume, the admin API and the
// webhook receiver on the pod's ports, the admin token from a Secret,
// and the Ingress host as the public webhook URL.
func TestRenderedConfigValidates(t *testing.T) {
	for name, values := range map[string]map[string]any{
		"one workspace":            loadValues(t, filepath.Join("testdata", "one-workspace-secret-env.yaml")),
		"three workspaces example": exampleValues(t),
	} {
		t.Run(name, func(t *testing.T) {
			m := mustRender(t, values)
			for _, cm := range m.configMaps {
				var unset []string
				getenv := func(k string) string {
					switch {
					case k == "DATABASE_URL":
						return "postgres://syncd@db.internal:5432/crm"
					case strings.HasPrefix(k, "SYNCD_TEST_"):
						return ""
					}
					unset = append(unset, k)
					return "value-of-" + k
				}
				cfg, err := config.ParseConfig([]byte(cm.Data["syncd.yaml"]), getenv)
				if err != nil {
					t.Fatalf("ConfigMap %s: syncd refuses its configuration: %v\n%s", cm.Name, err, cm.Data["syncd.yaml"])
				}
				if cfg.State.Path != "/var/lib/syncd/syncd.db" || cfg.Admin.Listen != "0.0.0.0:8081" || cfg.Webhooks.Listen != "0.0.0.0:8080" {
					t.Errorf("ConfigMap %s: state %q, admin %q, webhooks %q", cm.Name, cfg.State.Path, cfg.Admin.Listen, cfg.Webhooks.Listen)
				}
				if cfg.Admin.Token != "value-of-SYNCD_ADMIN_TOKEN" {
					t.Errorf("ConfigMap %s: admin token %q, want it from ${SYNCD_ADMIN_TOKEN}", cm.Name, cfg.Admin.Token)
				}
				if cm.Name == "syncd-initech" && cfg.Webhooks.PublicURL != "https://initech.hooks.example-agency.com/webhooks/workspace" {
					t.Errorf("ConfigMap %s: publicURL %q, want the Ingress host's webhook URL", cm.Name, cfg.Webhooks.PublicURL)
				}
			}
		})
	}
}
