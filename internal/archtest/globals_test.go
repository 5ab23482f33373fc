package archtest

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// TestNoExportedMutableSlices keeps the module free of exported package
// variables holding a slice or a map literal: any importer could change
// them for everyone (no global mutable state). Such a value is a function
// returning a fresh copy. Packages still being added on other branches
// (allowedUndocumented) are not checked yet.
func TestNoExportedMutableSlices(t *testing.T) {
	root := filepath.Join("..", "..")
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if d.Name() == ".git" || d.Name() == "out" {
				return filepath.SkipDir
			}
			for _, a := range allowedUndocumented {
				if rel == a || strings.HasPrefix(rel, a+"/") {
					return filepath.SkipDir
				}
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, p, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		for _, decl := range f.Decls {
			g, ok := decl.(*ast.GenDecl)
			if !ok || g.Tok != token.VAR {
				continue
			}
			for _, spec := range g.Specs {
				vs := spec.(*ast.ValueSpec)
				for i, n := range vs.Names {
					if n.IsExported() && (isSliceOrMap(vs.Type) || (i < len(vs.Values) && isSliceOrMapLit(vs.Values[i]))) {
						t.Errorf("%s: exported variable %s holds a slice or map any importer can change; make it a function returning a fresh value", fset.Position(n.Pos()), n.Name)
					}
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func isSliceOrMap(e ast.Expr) bool {
	switch e.(type) {
	case *ast.ArrayType, *ast.MapType:
		return true
	}
	return false
}

func isSliceOrMapLit(e ast.Expr) bool {
	cl, ok := e.(*ast.CompositeLit)
	return ok && isSliceOrMap(cl.Type)
}
