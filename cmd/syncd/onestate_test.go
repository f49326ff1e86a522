package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
)

// TestStateFileOpenedInOnePlace: of the command's shipped code, only
// openStateFile calls state.Open, and every daemon.New is given the store
// it opened (without one, the daemon opens the file itself), so that
// every command waits for the lock alike and says the same when a daemon
// holds it.
func TestStateFileOpenedInOnePlace(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	var opens []string
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Body == nil {
				continue
			}
			ast.Inspect(fn.Body, func(n ast.Node) bool {
				call, ok := n.(*ast.CallExpr)
				if !ok {
					return true
				}
				switch callee(call) {
				case "state.Open":
					opens = append(opens, fn.Name.Name)
				case "daemon.New":
					if len(call.Args) != 3 || !hasField(call.Args[2], "Store") {
						t.Errorf("%s: %s calls daemon.New without the store openStateFile opened", fset.Position(call.Pos()), fn.Name.Name)
					}
				}
				return true
			})
		}
	}
	if strings.Join(opens, ",") != "openStateFile" {
		t.Errorf("state.Open is called in %v, want only in openStateFile", opens)
	}
}

// callee is pkg.Func of a call of a package's function.
func callee(call *ast.CallExpr) string {
	sel, ok := call.Fun.(*ast.SelectorExpr)
	if !ok {
		return ""
	}
	pkg, ok := sel.X.(*ast.Ident)
	if !ok {
		return ""
	}
	return pkg.Name + "." + sel.Sel.Name
}

// hasField reports whether e is a composite literal that sets field, or
// a variable (which the caller filled).
func hasField(e ast.Expr, field string) bool {
	lit, ok := e.(*ast.CompositeLit)
	if !ok {
		return true
	}
	for _, el := range lit.Elts {
		if kv, ok := el.(*ast.KeyValueExpr); ok {
			if id, ok := kv.Key.(*ast.Ident); ok && id.Name == field {
				return true
			}
		}
	}
	return false
}
