package connector

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"strings"
	"testing"
)

// TestEveryOptionalInterfaceIsACapability keeps the capability list
// complete: every interface this package declares for a Source to
// implement, beyond Source, Writer and Settings, must be a Capability,
// so that connectors declare it and the contract suite checks it.
func TestEveryOptionalInterfaceIsACapability(t *testing.T) {
	listed := map[string]bool{"Source": true, "Writer": true, "Settings": true}
	for _, c := range Capabilities() {
		listed[c.Interface()] = true
	}
	entries, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".go") || strings.HasSuffix(e.Name(), "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, e.Name(), nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.TYPE {
				continue
			}
			for _, s := range g.Specs {
				ts := s.(*ast.TypeSpec)
				if _, isIface := ts.Type.(*ast.InterfaceType); isIface && ts.Name.IsExported() && !listed[ts.Name.Name] {
					t.Errorf("%s declares interface %s, which is no Capability: add it to capability.go so that connectors declare it", e.Name(), ts.Name.Name)
				}
			}
		}
	}
}
