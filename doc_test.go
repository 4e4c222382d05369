package nros

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// TestEveryExportedNameIsDocumented walks every library package of the
// module (not commands, tests, interop/build or testdata) and fails for an
// exported function, method of an exported type, type, or ungrouped
// constant or variable without a doc comment: `go doc` must explain
// everything it shows.
func TestEveryExportedNameIsDocumented(t *testing.T) {
	var missing []string
	err := filepath.WalkDir(".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case "build", ".git", "testdata":
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, p, nil, parser.ParseComments)
		if err != nil {
			return err
		}
		if f.Name.Name == "main" {
			return nil
		}
		for _, decl := range f.Decls {
			missing = append(missing, undocumented(fset, decl)...)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range missing {
		t.Errorf("undocumented exported name: %s", m)
	}
}

// undocumented lists the exported names decl declares without a doc comment.
func undocumented(fset *token.FileSet, decl ast.Decl) []string {
	var out []string
	switch d := decl.(type) {
	case *ast.FuncDecl:
		if !d.Name.IsExported() || d.Doc != nil || (d.Recv != nil && !receiverExported(d.Recv.List[0].Type)) {
			return nil
		}
		out = append(out, fset.Position(d.Pos()).String()+": func "+d.Name.Name)
	case *ast.GenDecl:
		for _, sp := range d.Specs {
			switch s := sp.(type) {
			case *ast.TypeSpec:
				if s.Name.IsExported() && d.Doc == nil && s.Doc == nil {
					out = append(out, fset.Position(s.Pos()).String()+": type "+s.Name.Name)
				}
			case *ast.ValueSpec:
				// A name in a documented group, or with a comment of its
				// own, is documented.
				if d.Doc != nil || s.Doc != nil || s.Comment != nil || d.Lparen.IsValid() {
					continue
				}
				for _, n := range s.Names {
					if n.IsExported() {
						out = append(out, fset.Position(n.Pos()).String()+": "+n.Name)
					}
				}
			}
		}
	}
	return out
}

// receiverExported reports whether a method's receiver type is exported
// (methods of unexported types do not appear in go doc).
func receiverExported(t ast.Expr) bool {
	for {
		switch x := t.(type) {
		case *ast.StarExpr:
			t = x.X
		case *ast.IndexExpr:
			t = x.X
		case *ast.IndexListExpr:
			t = x.X
		case *ast.Ident:
			return x.IsExported()
		default:
			return true
		}
	}
}
