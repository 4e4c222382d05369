package nros

import (
	"go/ast"
	"go/doc"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// TestPublicAPIShowsNoInternals guards what `go doc` shows of this package
// (a cheap syntactic check of the non-test files, no type checking):
//   - no exported type is an alias, and no exported type, field, function
//     or method signature names a type of an internal package: a user
//     could not read its documentation or methods;
//   - no exported variable holds a function (reassignable API): exported
//     variables are sentinel errors (Err…) or values built in place, never
//     a copy of another name, never a value of an internal package;
//   - every exported type, function, method, constant and variable group
//     is documented.
func TestPublicAPIShowsNoInternals(t *testing.T) {
	fset := token.NewFileSet()
	names, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	var files []*ast.File
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		f, err := parser.ParseFile(fset, name, src, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	pkg, err := doc.NewFromFiles(fset, files, "github.com/nros-go/nros")
	if err != nil {
		t.Fatal(err)
	}
	// internal[file][name] reports whether name is an import of an
	// internal package in that file.
	internal := map[string]map[string]bool{}
	for _, f := range files {
		m := map[string]bool{}
		for _, imp := range f.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			if !strings.Contains(path, "/internal/") && !strings.HasPrefix(path, "internal/") {
				continue
			}
			name := path[strings.LastIndexByte(path, '/')+1:]
			if imp.Name != nil {
				name = imp.Name.Name
			}
			m[name] = true
		}
		internal[fset.File(f.Pos()).Name()] = m
	}
	where := func(n ast.Node) string { return fset.Position(n.Pos()).String() }
	// mentionsInternal reports the first internal package named in n.
	mentionsInternal := func(n ast.Node) string {
		if n == nil {
			return ""
		}
		imports := internal[fset.File(n.Pos()).Name()]
		found := ""
		ast.Inspect(n, func(x ast.Node) bool {
			if sel, ok := x.(*ast.SelectorExpr); ok {
				if id, ok := sel.X.(*ast.Ident); ok && imports[id.Name] && found == "" {
					found = id.Name + "." + sel.Sel.Name
				}
			}
			return found == ""
		})
		return found
	}
	checkFunc := func(name string, f *doc.Func) {
		if strings.TrimSpace(f.Doc) == "" {
			t.Errorf("%s: %s has no doc comment", where(f.Decl), name)
		}
		if m := mentionsInternal(f.Decl.Type); m != "" {
			t.Errorf("%s: the signature of %s names %s", where(f.Decl), name, m)
		}
	}
	checkValues := func(vals []*doc.Value) {
		for _, v := range vals {
			for _, spec := range v.Decl.Specs {
				vs := spec.(*ast.ValueSpec)
				exported := false
				for _, id := range vs.Names {
					exported = exported || id.IsExported()
				}
				if !exported {
					continue
				}
				if strings.TrimSpace(v.Doc) == "" && vs.Doc == nil && vs.Comment == nil {
					t.Errorf("%s: %s has no doc comment", where(vs), vs.Names[0].Name)
				}
				if m := mentionsInternal(vs.Type); m != "" {
					t.Errorf("%s: %s has type %s", where(vs), vs.Names[0].Name, m)
				}
				if v.Decl.Tok != token.VAR {
					continue
				}
				if _, ok := vs.Type.(*ast.FuncType); ok {
					t.Errorf("%s: %s is a function variable", where(vs), vs.Names[0].Name)
				}
				for i, val := range vs.Values {
					name := vs.Names[min(i, len(vs.Names)-1)].Name
					switch val.(type) {
					case *ast.FuncLit:
						t.Errorf("%s: %s is a function variable", where(vs), name)
					case *ast.Ident, *ast.SelectorExpr:
						if m := mentionsInternal(val); m != "" {
							t.Errorf("%s: %s is %s: go doc shows the internal name, not a value of this package", where(vs), name, m)
						} else if !strings.HasPrefix(name, "Err") {
							t.Errorf("%s: %s re-exports another name as a variable", where(vs), name)
						}
					}
				}
			}
		}
	}
	checkValues(pkg.Consts)
	checkValues(pkg.Vars)
	for _, f := range pkg.Funcs {
		checkFunc(f.Name, f)
	}
	for _, typ := range pkg.Types {
		ts := typ.Decl.Specs[0].(*ast.TypeSpec)
		for _, s := range typ.Decl.Specs {
			if s.(*ast.TypeSpec).Name.Name == typ.Name {
				ts = s.(*ast.TypeSpec)
			}
		}
		if strings.TrimSpace(typ.Doc) == "" {
			t.Errorf("%s: type %s has no doc comment", where(ts), typ.Name)
		}
		if ts.Assign.IsValid() {
			if m := mentionsInternal(ts.Type); m != "" {
				t.Errorf("%s: type %s is an alias of %s", where(ts), typ.Name, m)
			}
		}
		switch st := ts.Type.(type) {
		case *ast.StructType:
			for _, fld := range st.Fields.List {
				exported := len(fld.Names) == 0 // embedded
				for _, id := range fld.Names {
					exported = exported || id.IsExported()
				}
				if m := mentionsInternal(fld.Type); exported && m != "" {
					t.Errorf("%s: a field of %s has type %s", where(fld), typ.Name, m)
				}
			}
		case *ast.InterfaceType:
			for _, meth := range st.Methods.List {
				if m := mentionsInternal(meth.Type); m != "" && (len(meth.Names) == 0 || meth.Names[0].IsExported()) {
					t.Errorf("%s: a method of %s names %s", where(meth), typ.Name, m)
				}
			}
		default:
			if m := mentionsInternal(ts.Type); m != "" && !ts.Assign.IsValid() {
				t.Errorf("%s: type %s is defined as %s", where(ts), typ.Name, m)
			}
		}
		checkValues(typ.Consts)
		checkValues(typ.Vars)
		for _, f := range typ.Funcs {
			checkFunc(f.Name, f)
		}
		for _, f := range typ.Methods {
			checkFunc(typ.Name+"."+f.Name, f)
		}
	}
}

// TestNoMethodBypassesTheExecutor: Subscription and Service run user code
// only from the executor, so they offer no method (exported, hence callable
// by users) that the executor uses to run it.
func TestNoMethodBypassesTheExecutor(t *testing.T) {
	type msg struct{ X int32 }
	for _, typ := range []reflect.Type{
		reflect.TypeFor[*Subscription[msg]](),
		reflect.TypeFor[*Service[msg, msg]](),
	} {
		for _, name := range []string{"Execute", "Identity"} {
			if _, ok := typ.MethodByName(name); ok {
				t.Errorf("%v has an exported method %s: a user calling it runs callbacks outside the executor", typ, name)
			}
		}
	}
}
