package architecture

import (
	"fmt"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

const (
	// maxForwardTypeMethods bounds the methods of any type of the forward
	// direction: a stage that grows past it holds two stages.
	maxForwardTypeMethods = 30
	// maxForwardFileCycles bounds the references from one file of reconcile
	// to another that lie on a cycle of such references (run back up).
	maxForwardFileCycles = 5
)

// TestForwardStagesSmall checks that no type of reconcile has more than
// maxForwardTypeMethods methods: the pass ties the stages together, each
// stage is a type of its own.
func TestForwardStagesSmall(t *testing.T) {
	files, err := filepath.Glob("../../reconcile/*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	methods := map[string]int{}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		_, ms, err := sizes(fset, f, nil)
		if err != nil {
			t.Fatal(err)
		}
		for name, n := range ms {
			methods[name] += n
		}
	}
	if methods["pass"] == 0 {
		t.Fatal("found no methods of reconcile's pass: is the file list right?")
	}
	for name, n := range methods {
		if n > maxForwardTypeMethods {
			t.Errorf("reconcile.%s has %d methods, more than %d: give the new step a stage type of its own (see reconcile/pass.go)",
				name, n, maxForwardTypeMethods)
		}
	}
}

// TestForwardFilesLayered checks that reconcile's files are layered: a
// reference from one file to what another declares, that the other (or a
// file it uses) returns, lies on a cycle and runs back up.
func TestForwardFilesLayered(t *testing.T) {
	edges, err := fileReferences("../../reconcile")
	if err != nil {
		t.Fatal(err)
	}
	if len(edges) < 20 {
		t.Fatalf("found %d references between reconcile's files: is the type check right?", len(edges))
	}
	cyclic := onCycles(edges)
	if len(cyclic) > maxForwardFileCycles {
		t.Errorf("%d of %d references between reconcile's files lie on cycles, more than %d: move what two files share below both\n  %s",
			len(cyclic), len(edges), maxForwardFileCycles, strings.Join(cyclic, "\n  "))
	}
}

func TestOnCyclesCountsThem(t *testing.T) {
	edges := map[[2]string]bool{{"a", "b"}: true, {"b", "c"}: true, {"c", "a"}: true, {"c", "d"}: true}
	if got := onCycles(edges); len(got) != 3 {
		t.Errorf("onCycles = %v, want the 3 edges of a -> b -> c -> a", got)
	}
}

// fileReferences type-checks the non-test files of the package in dir and
// returns each pair of files of which the first uses what the second
// declares (package-level names, fields and methods).
func fileReferences(dir string) (map[[2]string]bool, error) {
	fset := token.NewFileSet()
	names, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return nil, err
	}
	var files []*ast.File
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			return nil, err
		}
		files = append(files, f)
	}
	exports, err := exportData(dir)
	if err != nil {
		return nil, err
	}
	imp := importer.ForCompiler(fset, "gc", func(path string) (io.ReadCloser, error) {
		f, ok := exports[path]
		if !ok {
			return nil, fmt.Errorf("no export data for %s", path)
		}
		return os.Open(f)
	})
	info := &types.Info{Uses: map[*ast.Ident]types.Object{}}
	pkg, err := (&types.Config{Importer: imp}).Check("reconcile", fset, files, info)
	if err != nil {
		return nil, fmt.Errorf("type-check %s: %w", dir, err)
	}
	edges := map[[2]string]bool{}
	for id, obj := range info.Uses {
		if obj.Pkg() != pkg || !obj.Pos().IsValid() {
			continue
		}
		if v, ok := obj.(*types.Var); ok && !v.IsField() && v.Parent() != pkg.Scope() {
			continue // a local variable
		}
		from := filepath.Base(fset.Position(id.Pos()).Filename)
		to := filepath.Base(fset.Position(obj.Pos()).Filename)
		if from != to {
			edges[[2]string{from, to}] = true
		}
	}
	return edges, nil
}

// exportData maps each package the package in dir depends on to its
// compiled export data.
func exportData(dir string) (map[string]string, error) {
	cmd := exec.Command("go", "list", "-export", "-deps", "-f", "{{.ImportPath}} {{.Export}}", ".")
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go list -export: %w", err)
	}
	m := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if path, file, ok := strings.Cut(line, " "); ok && file != "" {
			m[path] = file
		}
	}
	return m, nil
}

// onCycles returns the edges whose two ends are in one strongly connected
// component (Tarjan), as "from -> to", sorted.
func onCycles(edges map[[2]string]bool) []string {
	adj := map[string][]string{}
	var nodes []string
	for e := range edges {
		if _, ok := adj[e[0]]; !ok {
			nodes = append(nodes, e[0])
		}
		adj[e[0]] = append(adj[e[0]], e[1])
	}
	sort.Strings(nodes)
	index, low, comp := map[string]int{}, map[string]int{}, map[string]int{}
	on := map[string]bool{}
	var stack []string
	n, c := 0, 0
	var visit func(v string)
	visit = func(v string) {
		index[v], low[v] = n, n
		n++
		stack = append(stack, v)
		on[v] = true
		for _, w := range adj[v] {
			if _, seen := index[w]; !seen {
				visit(w)
				low[v] = min(low[v], low[w])
			} else if on[w] {
				low[v] = min(low[v], index[w])
			}
		}
		if low[v] == index[v] {
			for {
				w := stack[len(stack)-1]
				stack = stack[:len(stack)-1]
				on[w] = false
				comp[w] = c
				if w == v {
					break
				}
			}
			c++
		}
	}
	for _, v := range nodes {
		if _, seen := index[v]; !seen {
			visit(v)
		}
	}
	var out []string
	for e := range edges {
		cf, ok1 := comp[e[0]]
		ct, ok2 := comp[e[1]]
		if ok1 && ok2 && cf == ct {
			out = append(out, e[0]+" -> "+e[1])
		}
	}
	sort.Strings(out)
	return out
}
