package architecture

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os/exec"
	"path"
	"sort"
	"strings"
	"testing"
)

// Sizes the house keeps (issue 32): an interface asks for what its user
// calls, and the state is split by domain, each a small type.
const (
	maxInterfaceMethods = 20
	maxStateTypeMethods = 30
)

// sizes counts, in one file's source, the methods of each interface it
// declares and the methods declared on each type.
func sizes(fset *token.FileSet, name string, src any) (ifaces, methods map[string]int, err error) {
	f, err := parser.ParseFile(fset, name, src, parser.SkipObjectResolution)
	if err != nil {
		return nil, nil, err
	}
	ifaces, methods = map[string]int{}, map[string]int{}
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.GenDecl:
			for _, s := range d.Specs {
				if ts, ok := s.(*ast.TypeSpec); ok {
					if it, ok := ts.Type.(*ast.InterfaceType); ok {
						ifaces[ts.Name.Name] = len(it.Methods.List)
					}
				}
			}
		case *ast.FuncDecl:
			if d.Recv == nil || len(d.Recv.List) == 0 {
				continue
			}
			t := d.Recv.List[0].Type
			if st, ok := t.(*ast.StarExpr); ok {
				t = st.X
			}
			if id, ok := t.(*ast.Ident); ok {
				methods[id.Name]++
			}
		}
	}
	return ifaces, methods, nil
}

// shippedFiles lists the module's non-test Go files outside test support.
func shippedFiles(t *testing.T) []string {
	t.Helper()
	out, err := exec.Command("git", "-C", "../..", "ls-files", "*.go").Output()
	if err != nil {
		t.Fatalf("git ls-files: %v", err)
	}
	var files []string
	for _, f := range strings.Fields(string(out)) {
		if strings.HasSuffix(f, "_test.go") || strings.HasPrefix(f, "deploy/") || matches(path.Dir(f), testSupport) {
			continue
		}
		files = append(files, f)
	}
	return files
}

// TestSmallInterfacesAndStateDomains: no interface in shipped code has
// more than maxInterfaceMethods methods, and no type of the state package
// more than maxStateTypeMethods (a new concern is a new domain type).
func TestSmallInterfacesAndStateDomains(t *testing.T) {
	fset := token.NewFileSet()
	stateMethods := map[string]int{}
	for _, f := range shippedFiles(t) {
		ifaces, methods, err := sizes(fset, "../../"+f, nil)
		if err != nil {
			t.Fatal(err)
		}
		for name, n := range ifaces {
			if n > maxInterfaceMethods {
				t.Errorf("%s: interface %s has %d methods, more than %d: ask for the few methods the user calls",
					f, name, n, maxInterfaceMethods)
			}
		}
		if path.Dir(f) == "state" {
			for name, n := range methods {
				stateMethods[name] += n
			}
		}
	}
	names := make([]string, 0, len(stateMethods))
	for name := range stateMethods {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if n := stateMethods[name]; n > maxStateTypeMethods {
			t.Errorf("state.%s has %d methods, more than %d: give the new concern a domain type of its own",
				name, n, maxStateTypeMethods)
		}
	}
	if len(names) == 0 {
		t.Fatal("found no methods in package state: is the file list right?")
	}
}

// TestSizesCountThemselves makes sure the counts above can fail.
func TestSizesCountThemselves(t *testing.T) {
	var b strings.Builder
	b.WriteString("package p\ntype Big interface {\n")
	for i := range maxInterfaceMethods + 1 {
		b.WriteString("\tM" + strings.Repeat("x", i) + "()\n")
	}
	b.WriteString("}\ntype S struct{}\nfunc (s *S) A() {}\nfunc (S) B() {}\nfunc F() {}\n")
	ifaces, methods, err := sizes(token.NewFileSet(), "p.go", b.String())
	if err != nil {
		t.Fatal(err)
	}
	if got := ifaces["Big"]; got != maxInterfaceMethods+1 {
		t.Errorf("interface Big: counted %d methods, want %d", got, maxInterfaceMethods+1)
	}
	if got := methods["S"]; got != 2 {
		t.Errorf("type S: counted %d methods, want 2", got)
	}
}
