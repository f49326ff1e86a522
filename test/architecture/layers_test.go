package architecture

import (
	"os/exec"
	"sort"
	"strings"
	"testing"
)

const module = "github.com/syncd-io/syncd/"

// layers ranks every package by its path, lowest first: a package may
// import packages of its own rank or below (Go itself rules out cycles).
// The longest matching prefix decides; a package no prefix matches fails
// the test, so a new package is placed on purpose.
var layers = []struct {
	rank     int
	prefixes []string
}{
	{0, []string{"policy", "progress", "state", "internal/idset", "internal/logfield", "internal/remote", "workspace/signature", "internal/emukit", "internal/testkit/"}},
	{1, []string{"workspace", "connector"}},
	{2, []string{"connector/", "workspace/emulator", "mapping/mappingtest"}},
	{3, []string{"mapping", "config", "connector/all", "discover"}},
	{4, []string{"reconcile", "reverse", "webhook", "activity"}},
	{5, []string{"metrics", "admin"}},
	{6, []string{"daemon"}},
	{7, []string{"demo", "bench", "test/e2e", "test/emutest"}},
	{8, []string{"cmd/", "test/"}},
}

// testSupport are the packages that exist for tests; userFacing may import
// them (the demos and benchmarks run the emulator and the CRM test
// servers, and the emulator is a command of its own).
var (
	testSupport = []string{"internal/testkit/", "test/", "connector/connectortest", "mapping/mappingtest", "connector/hubspot/hubspottest", "connector/pipedrive/pipedrivetest", "connector/salesforce/salesforcetest"}
	userFacing  = []string{"demo", "bench", "cmd/syncd"}
)

func rank(pkg string) (int, bool) {
	best, bestLen := -1, -1
	for _, l := range layers {
		for _, p := range l.prefixes {
			match := pkg == strings.TrimSuffix(p, "/") || (strings.HasSuffix(p, "/") && strings.HasPrefix(pkg, p))
			if match && len(p) > bestLen {
				best, bestLen = l.rank, len(p)
			}
		}
	}
	return best, best >= 0
}

func matches(pkg string, list []string) bool {
	for _, p := range list {
		if pkg == p || (strings.HasSuffix(p, "/") && strings.HasPrefix(pkg, p)) {
			return true
		}
	}
	return false
}

// imports lists every package of the module with the module's packages
// its non-test files import.
func imports(t *testing.T) map[string][]string {
	t.Helper()
	out, err := exec.Command("go", "list", "-f", "{{.ImportPath}}{{range .Imports}} {{.}}{{end}}", module+"...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	graph := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		pkg := strings.TrimPrefix(f[0], module)
		graph[pkg] = nil
		for _, imp := range f[1:] {
			if strings.HasPrefix(imp, module) {
				graph[pkg] = append(graph[pkg], strings.TrimPrefix(imp, module))
			}
		}
	}
	return graph
}

func TestNoPackageImportsOneAboveIt(t *testing.T) {
	graph := imports(t)
	pkgs := make([]string, 0, len(graph))
	for p := range graph {
		pkgs = append(pkgs, p)
	}
	sort.Strings(pkgs)
	for _, pkg := range pkgs {
		r, ok := rank(pkg)
		if !ok {
			t.Errorf("package %s has no layer: place it in test/architecture's layers and docs/ARCHITECTURE.md", pkg)
			continue
		}
		for _, imp := range graph[pkg] {
			if ri, _ := rank(imp); ri > r {
				t.Errorf("%s (layer %d) imports %s (layer %d), which stands above it", pkg, r, imp, ri)
			}
		}
	}
}

func TestShippedCodeImportsNoTestSupport(t *testing.T) {
	for pkg, deps := range imports(t) {
		if matches(pkg, testSupport) || matches(pkg, userFacing) || pkg == "workspace/emulator" {
			continue
		}
		for _, imp := range deps {
			if matches(imp, testSupport) {
				t.Errorf("shipped package %s imports test support %s", pkg, imp)
			}
		}
	}
}

// TestLayersCheckThemselves makes sure the rule above can fail: an import
// of a higher layer is caught.
func TestLayersCheckThemselves(t *testing.T) {
	tests := []struct {
		name, from, to string
		upward         bool
	}{
		{"state importing the daemon", "state", "daemon", true},
		{"a connector importing the reconciler", "connector/csv", "reconcile", true},
		{"testkit importing an end-to-end helper", "internal/testkit/pgtest", "test/e2e", true},
		{"the daemon importing state", "daemon", "state", false},
		{"a test server importing the fake API kit", "connector/hubspot/hubspottest", "internal/emukit", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rf, _ := rank(tc.from)
			rt, _ := rank(tc.to)
			if got := rt > rf; got != tc.upward {
				t.Errorf("%s (%d) -> %s (%d): upward = %v, want %v", tc.from, rf, tc.to, rt, got, tc.upward)
			}
		})
	}
}
