package chart

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/lint"
	"helm.sh/helm/v3/pkg/lint/support"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
)

// TestRender renders one and three workspaces and checks what each
// workspace gets: one StatefulSet of one replica that stops the old pod
// before starting the new, its state volume, probes, a non-root
// read-only security context, and a ConfigMap, Service (and, where
// configured, Ingress, CronJob and monitoring objects) of its own.
func TestRender(t *testing.T) {
	tests := []struct {
		name       string
		values     map[string]any
		workspaces []string
		monitoring bool
		backups    bool
		ingresses  int
	}{
		{name: "one workspace", values: loadValues(t, filepath.Join("testdata", "one-workspace-secret-env.yaml")), workspaces: []string{"solo"}},
		{name: "three workspaces example", values: exampleValues(t), workspaces: []string{"acme", "globex", "initech"}, monitoring: true, backups: true, ingresses: 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := mustRender(t, tc.values)
			n := len(tc.workspaces)
			if len(m.statefulSets) != n || len(m.configMaps) != n || len(m.services) != n {
				t.Fatalf("got %d StatefulSets, %d ConfigMaps, %d Services; want %d each", len(m.statefulSets), len(m.configMaps), len(m.services), n)
			}
			for i, ws := range tc.workspaces {
				checkStatefulSet(t, m.statefulSets[i], ws)
			}
			if len(m.ingresses) != tc.ingresses {
				t.Errorf("got %d Ingresses, want %d", len(m.ingresses), tc.ingresses)
			}
			for _, ing := range m.ingresses {
				for _, r := range ing.Spec.Rules {
					for _, p := range r.HTTP.Paths {
						if p.Backend.Service.Port.Name != "webhooks" || p.Path != "/webhooks/workspace" {
							t.Errorf("Ingress %s routes %s to port %q; want only the webhook path to the webhooks port", ing.Name, p.Path, p.Backend.Service.Port.Name)
						}
					}
				}
			}
			want := 0
			if tc.monitoring {
				want = n
			}
			if len(m.serviceMonitors) != want || len(m.rules) != want {
				t.Errorf("got %d ServiceMonitors, %d PrometheusRules; want %d each", len(m.serviceMonitors), len(m.rules), want)
			}
			want = 0
			if tc.backups {
				want = n
			}
			if len(m.cronJobs) != want {
				t.Errorf("got %d backup CronJobs, want %d", len(m.cronJobs), want)
			}
			for i, cj := range m.cronJobs {
				ws := tc.workspaces[i]
				args := strings.Join(cj.Spec.JobTemplate.Spec.Template.Spec.Containers[0].Args, " ")
				if want := "state backup --config /etc/syncd/syncd.yaml --admin-url http://syncd-" + ws + ":8081 --keep 14 /backups/syncd-{time}.db"; args != want {
					t.Errorf("CronJob %s runs %q, want %q", cj.Name, args, want)
				}
				if cj.Spec.ConcurrencyPolicy != "Forbid" {
					t.Errorf("CronJob %s: concurrency %q, want Forbid", cj.Name, cj.Spec.ConcurrencyPolicy)
				}
			}
			for i, r := range m.rules {
				ws := tc.workspaces[i]
				if len(r.Spec.Groups) != 1 || len(r.Spec.Groups[0].Rules) != readmeAlerts(t) {
					t.Fatalf("PrometheusRule %s: want one group with the README's alerts, got %+v", r.Name, r.Spec.Groups)
				}
				for _, rule := range r.Spec.Groups[0].Rules {
					if rule.Labels["workspace"] != ws || !strings.Contains(rule.Expr.String(), `workspace="`+ws+`"`) {
						t.Errorf("PrometheusRule %s, %s: labels %v, expr %s; want both scoped to workspace %s", r.Name, rule.Alert, rule.Labels, rule.Expr.String(), ws)
					}
				}
			}
		})
	}
}

// checkStatefulSet checks one workspace's StatefulSet.
func checkStatefulSet(t *testing.T, s appsv1.StatefulSet, ws string) {
	t.Helper()
	if want := "syncd-" + ws; s.Name != want {
		t.Errorf("StatefulSet %s, want %s", s.Name, want)
	}
	if s.Spec.Replicas == nil || *s.Spec.Replicas != 1 {
		t.Errorf("%s: replicas %v, want exactly 1 (bbolt has one writer)", s.Name, s.Spec.Replicas)
	}
	if s.Spec.UpdateStrategy.Type != "RollingUpdate" || s.Spec.PodManagementPolicy != "OrderedReady" {
		t.Errorf("%s: update %q, pod management %q; want RollingUpdate, OrderedReady (the old pod ends before the new starts)", s.Name, s.Spec.UpdateStrategy.Type, s.Spec.PodManagementPolicy)
	}
	if len(s.Spec.VolumeClaimTemplates) != 1 || s.Spec.VolumeClaimTemplates[0].Name != "state" ||
		len(s.Spec.VolumeClaimTemplates[0].Spec.AccessModes) != 1 || s.Spec.VolumeClaimTemplates[0].Spec.AccessModes[0] != corev1.ReadWriteOnce {
		t.Errorf("%s: want one ReadWriteOnce volume claim named state, got %+v", s.Name, s.Spec.VolumeClaimTemplates)
	}
	pod := s.Spec.Template.Spec
	if len(pod.Containers) != 1 {
		t.Fatalf("%s: %d containers, want 1", s.Name, len(pod.Containers))
	}
	c := pod.Containers[0]
	if !mounted(c, "state", "/var/lib/syncd") || !mounted(c, "config", "/etc/syncd") || !mounted(c, "tmp", "/tmp") {
		t.Errorf("%s: mounts %+v; want state at /var/lib/syncd, config at /etc/syncd, tmp at /tmp", s.Name, c.VolumeMounts)
	}
	probe := func(p *corev1.Probe, path string) bool {
		return p != nil && p.HTTPGet != nil && p.HTTPGet.Path == path && p.HTTPGet.Port.String() == "admin"
	}
	if !probe(c.LivenessProbe, "/healthz") || !probe(c.ReadinessProbe, "/readyz") || !probe(c.StartupProbe, "/healthz") {
		t.Errorf("%s: want liveness and startup on /healthz, readiness on /readyz, on the admin port", s.Name)
	}
	sc, psc := c.SecurityContext, pod.SecurityContext
	if sc == nil || psc == nil || sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem ||
		sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation ||
		psc.RunAsNonRoot == nil || !*psc.RunAsNonRoot || psc.RunAsUser == nil || *psc.RunAsUser == 0 ||
		sc.Capabilities == nil || len(sc.Capabilities.Drop) != 1 || sc.Capabilities.Drop[0] != "ALL" {
		t.Errorf("%s: want non-root, read-only root filesystem, no privilege escalation, all capabilities dropped; got pod %+v container %+v", s.Name, psc, sc)
	}
	if c.Resources.Requests.Cpu().IsZero() || c.Resources.Requests.Memory().IsZero() || c.Resources.Limits.Memory().IsZero() {
		t.Errorf("%s: want cpu and memory requests and a memory limit, got %+v", s.Name, c.Resources)
	}
	if len(c.EnvFrom) == 0 {
		t.Errorf("%s: no Secret in envFrom: the configuration's ${VAR}s would be unset", s.Name)
	}
}

// mounted reports whether c mounts volume name at path.
func mounted(c corev1.Container, name, path string) bool {
	for _, m := range c.VolumeMounts {
		if m.Name == name && m.MountPath == path {
			return true
		}
	}
	return false
}

// TestNoSecretInConfigMaps renders workspaces whose Secrets hold known
// values and checks that no Secret value appears in any ConfigMap, while
// the configuration refers to each by ${VAR}.
func TestNoSecretInConfigMaps(t *testing.T) {
	m := mustRender(t, loadValues(t, filepath.Join("testdata", "one-workspace-secret-env.yaml")))
	if len(m.secrets) != 1 {
		t.Fatalf("got %d Secrets, want the workspace's secretEnv Secret", len(m.secrets))
	}
	var values []string
	for _, s := range m.secrets {
		for k, v := range s.StringData {
			values = append(values, v)
			for _, cm := range m.configMaps {
				if k != "SYNCD_ADMIN_TOKEN" && k != "WORKSPACE_API_KEY" && k != "DATABASE_URL" {
					continue
				}
				if !strings.Contains(cm.Data["syncd.yaml"], "${"+k+"}") {
					t.Errorf("ConfigMap %s does not refer to ${%s}", cm.Name, k)
				}
			}
		}
	}
	for _, cm := range m.configMaps {
		for key, text := range cm.Data {
			for _, v := range values {
				if strings.Contains(text, v) {
					t.Errorf("ConfigMap %s, %s holds a Secret's value", cm.Name, key)
				}
			}
		}
	}
}

// TestLiteralSecretRefused checks that a configuration holding a secret
// in clear is refused at render time, naming where it is.
func TestLiteralSecretRefused(t *testing.T) {
	tests := []struct {
		name  string
		patch func(ws map[string]any)
		want  string
	}{
		{"api key", func(ws map[string]any) {
			ws["config"].(map[string]any)["workspace"].(map[string]any)["apiKey"] = "wk-live-1234"
		}, "workspaces[solo].config.workspace.apiKey: a literal secret"},
		{"connector dsn", func(ws map[string]any) {
			conn := ws["config"].(map[string]any)["connectors"].([]any)[0].(map[string]any)
			conn["settings"].(map[string]any)["dsn"] = "postgres://u:pw@h/db"
		}, "workspaces[solo].config.connectors[db].settings.dsn: a literal secret"},
		{"admin token", func(ws map[string]any) {
			ws["config"].(map[string]any)["admin"] = map[string]any{"token": "letmein"}
		}, "workspaces[solo].config.admin.token: a literal secret"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			v := loadValues(t, filepath.Join("testdata", "one-workspace-secret-env.yaml"))
			tc.patch(v["workspaces"].([]any)[0].(map[string]any))
			_, err := render(t, v)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("render: %v; want an error containing %q", err, tc.want)
			}
		})
	}
}

// TestWorkspaceEntryRefused checks the errors of a malformed entry.
func TestWorkspaceEntryRefused(t *testing.T) {
	tests := []struct {
		name string
		ws   map[string]any
		want string
	}{
		{"bad name", map[string]any{"name": "Acme_Corp", "secrets": []any{"s"}, "config": map[string]any{}}, `name "Acme_Corp"`},
		{"no config", map[string]any{"name": "acme", "secrets": []any{"s"}}, "workspaces[acme]: config is required"},
		{"no secrets", map[string]any{"name": "acme", "config": map[string]any{"workspace": map[string]any{"apiKey": "${K}"}}}, "workspaces[acme]: secrets is required"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := render(t, map[string]any{"workspaces": []any{tc.ws}})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("render: %v; want an error containing %q", err, tc.want)
			}
		})
	}
}

// TestLint runs Helm's linter (helm lint, through its Go package) on the
// chart with its default values and with the three-workspace example.
func TestLint(t *testing.T) {
	for name, values := range map[string]map[string]any{
		"defaults":                 nil,
		"three workspaces example": exampleValues(t),
	} {
		t.Run(name, func(t *testing.T) {
			l := lint.All(chartDir, values, "agency", false)
			for _, msg := range l.Messages {
				t.Logf("lint: %s", msg)
				if msg.Severity >= support.WarningSev {
					t.Errorf("lint: %s", msg)
				}
			}
		})
	}
}

// readmeAlerts counts the alert rules the README lists, which the chart's
// PrometheusRule carries, scoped to each workspace.
func readmeAlerts(t *testing.T) int {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	return strings.Count(string(data), "\n- alert: ")
}
