package architecture

import (
	"fmt"
	"os/exec"
	"regexp"
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
	{0, []string{"policy", "progress", "state", "internal/idset", "internal/logfield", "internal/remote", "workspace/signature", "internal/emukit", "internal/capture", "internal/configfile", "internal/testkit/"}},
	{1, []string{"workspace", "connector"}},
	{2, []string{"connector/", "workspace/emulator", "bench/workload"}},
	{3, []string{"mapping", "config", "connector/all", "discover"}},
	{4, []string{"reconcile", "reverse", "webhook", "activity"}},
	{5, []string{"metrics", "admin"}},
	{6, []string{"daemon"}},
	{7, []string{"demo", "bench", "test/e2e", "test/emutest"}},
	{8, []string{"cmd/", "test/"}},
}

// testSupport are the packages that exist for tests only: shipped code
// imports none of them.
var testSupport = []string{"internal/testkit/", "test/", "connector/connectortest"}

// emulatorUsers are the shipped packages that may import an emulator: the
// emulator command, the demos and the benchmarks, which run them for users.
var emulatorUsers = []string{"cmd/syncd", "demo", "bench"}

// crmEmulator matches a CRM's emulator (its test server),
// connector/<type>/<type>emu.
var crmEmulator = regexp.MustCompile(`^connector/([a-z0-9]+)/([a-z0-9]+)emu$`)

// isEmulator reports whether pkg is a shipped emulator: the workspace's,
// or a CRM's (its directory named after its connector).
func isEmulator(pkg string) bool {
	if pkg == "workspace/emulator" {
		return true
	}
	m := crmEmulator.FindStringSubmatch(pkg)
	return m != nil && m[1] == m[2]
}

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

// shippedImportProblems applies the rules of docs/ARCHITECTURE.md on what
// ships: shipped code imports no test support; an emulator (the
// workspace's, the CRMs') is imported only by the emulator
// command, the demos, the benchmarks and test support; the emulators' kit
// (internal/emukit) only by emulators; generic test support
// (internal/testkit) imports nothing of syncd's but policy.
func shippedImportProblems(graph map[string][]string) []string {
	var problems []string
	for pkg, deps := range graph {
		test := matches(pkg, testSupport)
		for _, imp := range deps {
			switch {
			case !test && matches(imp, testSupport):
				problems = append(problems, fmt.Sprintf("shipped package %s imports test support %s", pkg, imp))
			case !test && isEmulator(imp) && !matches(pkg, emulatorUsers):
				problems = append(problems, fmt.Sprintf("%s imports the emulator %s: only %s run emulators", pkg, imp, strings.Join(emulatorUsers, ", ")))
			case imp == "internal/emukit" && !isEmulator(pkg):
				problems = append(problems, fmt.Sprintf("%s imports internal/emukit, the emulators' kit", pkg))
			case strings.HasPrefix(pkg, "internal/testkit/") && imp != "policy" && !strings.HasPrefix(imp, "internal/testkit/"):
				problems = append(problems, fmt.Sprintf("generic test support %s imports %s: it imports nothing of syncd's but policy", pkg, imp))
			}
		}
	}
	sort.Strings(problems)
	return problems
}

func TestShippedCodeImportsNoTestSupport(t *testing.T) {
	for _, p := range shippedImportProblems(imports(t)) {
		t.Error(p)
	}
}

// TestShipRulesCheckThemselves makes sure each rule of
// shippedImportProblems can fail.
func TestShipRulesCheckThemselves(t *testing.T) {
	tests := []struct {
		name, from, to string
		broken         bool
	}{
		{"the daemon importing a testkit package", "daemon", "internal/testkit/pgtest", true},
		{"the benchmarks importing the contract suite", "bench", "connector/connectortest", true},
		{"a connector importing its CRM's emulator", "connector/hubspot", "connector/hubspot/hubspotemu", true},
		{"the daemon importing the workspace emulator", "daemon", "workspace/emulator", true},
		{"a connector importing the emulators' kit", "connector/pipedrive", "internal/emukit", true},
		{"testkit importing a connector", "internal/testkit/pgtest", "connector", true},
		{"the emulator command serving a CRM's emulator", "cmd/syncd", "connector/salesforce/salesforceemu", false},
		{"a demo serving the workspace emulator", "demo", "workspace/emulator", false},
		{"a CRM emulator importing the emulators' kit", "connector/hubspot/hubspotemu", "internal/emukit", false},
		{"an emulator named after another connector importing the kit", "connector/hubspot/pipedriveemu", "internal/emukit", true},
		{"a test helper beside a connector importing the kit", "connector/hubspot/hubspotfake", "internal/emukit", true},
		{"an end-to-end helper importing a CRM emulator", "test/e2e", "connector/pipedrive/pipedriveemu", false},
		{"the benchmarks writing configuration files", "bench", "internal/configfile", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := shippedImportProblems(map[string][]string{tc.from: {tc.to}})
			if (len(got) > 0) != tc.broken {
				t.Errorf("%s -> %s: problems %q, want broken = %v", tc.from, tc.to, got, tc.broken)
			}
		})
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
		{"a CRM emulator importing the fake API kit", "connector/hubspot/hubspotemu", "internal/emukit", false},
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

// TestBinaryShipsNoTestSupport checks the rules above where they matter:
// what `go list -deps ./cmd/syncd` puts in the binary holds no test
// support, and the emulators it holds are the ones its commands serve.
func TestBinaryShipsNoTestSupport(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", module+"cmd/syncd").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	emulators := 0
	for _, pkg := range strings.Fields(string(out)) {
		if !strings.HasPrefix(pkg, module) {
			continue
		}
		pkg = strings.TrimPrefix(pkg, module)
		if matches(pkg, testSupport) {
			t.Errorf("the binary holds test support %s", pkg)
		}
		if isEmulator(pkg) {
			emulators++
		}
	}
	if emulators < 4 {
		t.Errorf("the binary holds %d emulators, want the workspace's and the three CRMs' (syncd emulator serves them)", emulators)
	}
}
