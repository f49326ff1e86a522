package chart

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"sigs.k8s.io/yaml"
)

// chartDir is the chart under test.
const chartDir = "syncd"

// manifests is one rendering of the chart, decoded by kind.
type manifests struct {
	statefulSets    []appsv1.StatefulSet
	configMaps      []corev1.ConfigMap
	secrets         []corev1.Secret
	services        []corev1.Service
	claims          []corev1.PersistentVolumeClaim
	ingresses       []networkingv1.Ingress
	cronJobs        []batchv1.CronJob
	serviceMonitors []monitoringv1.ServiceMonitor
	rules           []monitoringv1.PrometheusRule
}

// render renders the chart with values (merged over values.yaml) as
// release "syncd" in namespace "agency".
func render(t *testing.T, values map[string]any) (map[string]string, error) {
	t.Helper()
	ch, err := loader.Load(chartDir)
	if err != nil {
		t.Fatalf("load chart: %v", err)
	}
	opts := chartutil.ReleaseOptions{Name: "syncd", Namespace: "agency", Revision: 1, IsInstall: true}
	vals, err := chartutil.ToRenderValues(ch, values, opts, chartutil.DefaultCapabilities)
	if err != nil {
		t.Fatalf("render values: %v", err)
	}
	return engine.Render(ch, vals)
}

// mustRender renders the chart and decodes every manifest strictly.
func mustRender(t *testing.T, values map[string]any) manifests {
	t.Helper()
	files, err := render(t, values)
	if err != nil {
		t.Fatalf("render: %v", err)
	}
	return decodeAll(t, files)
}

// decodeAll decodes every document of every rendered template into its
// Kubernetes API type, failing on an unknown kind or field.
func decodeAll(t *testing.T, files map[string]string) manifests {
	t.Helper()
	var m manifests
	names := make([]string, 0, len(files))
	for name := range files {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if strings.HasSuffix(name, "NOTES.txt") || strings.HasSuffix(name, ".tpl") {
			continue
		}
		for i, doc := range strings.Split(files[name], "\n---") {
			if strings.TrimSpace(stripComments(doc)) == "" {
				continue
			}
			if err := m.add([]byte(doc)); err != nil {
				t.Fatalf("%s, document %d: %v\n%s", name, i, err, doc)
			}
		}
	}
	return m
}

// stripComments drops YAML comment lines, to find empty documents.
func stripComments(doc string) string {
	var b strings.Builder
	for _, l := range strings.Split(doc, "\n") {
		if !strings.HasPrefix(strings.TrimSpace(l), "#") {
			b.WriteString(l)
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// add decodes one manifest into its type.
func (m *manifests) add(doc []byte) error {
	var head struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
	}
	if err := yaml.Unmarshal(doc, &head); err != nil {
		return err
	}
	switch head.APIVersion + " " + head.Kind {
	case "apps/v1 StatefulSet":
		return decodeInto(doc, &m.statefulSets)
	case "v1 ConfigMap":
		return decodeInto(doc, &m.configMaps)
	case "v1 Secret":
		return decodeInto(doc, &m.secrets)
	case "v1 Service":
		return decodeInto(doc, &m.services)
	case "v1 PersistentVolumeClaim":
		return decodeInto(doc, &m.claims)
	case "networking.k8s.io/v1 Ingress":
		return decodeInto(doc, &m.ingresses)
	case "batch/v1 CronJob":
		return decodeInto(doc, &m.cronJobs)
	case "monitoring.coreos.com/v1 ServiceMonitor":
		return decodeInto(doc, &m.serviceMonitors)
	case "monitoring.coreos.com/v1 PrometheusRule":
		return decodeInto(doc, &m.rules)
	}
	return fmt.Errorf("unexpected manifest %s %s", head.APIVersion, head.Kind)
}

// decodeInto decodes doc strictly (unknown fields are errors) and
// appends it to list.
func decodeInto[T any](doc []byte, list *[]T) error {
	js, err := yaml.YAMLToJSON(doc)
	if err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(js))
	dec.DisallowUnknownFields()
	var v T
	if err := dec.Decode(&v); err != nil {
		return fmt.Errorf("strict decode: %w", err)
	}
	*list = append(*list, v)
	return nil
}

// loadValues reads a values file.
func loadValues(t *testing.T, path string) map[string]any {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var v map[string]any
	if err := yaml.Unmarshal(data, &v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return v
}

// exampleValues is the three-workspace example.
func exampleValues(t *testing.T) map[string]any {
	return loadValues(t, filepath.Join(chartDir, "examples", "three-workspaces.yaml"))
}
