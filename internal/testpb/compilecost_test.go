package testpb_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
)

// TestCloneEqualCompileOnce checks two properties of the generated Clone
// and Equal methods that keep their compile cost down and that no
// functional test sees, in this package's generated files and those of
// fluidos and edgeproto:
//
//   - Equal never calls fieldmap.EqualElem: generic in the message's struct
//     type, it is compiled once per message type it is used with (58 times
//     in fluidos), and it inlined the element's Equal a second time.
//   - Equal calls the isSet function of a oneof (a type switch over its
//     members, which the compiler inlines) once, not once per member.
//   - cloneTo copies each sub-message field with one call (cloneTo or
//     Clone): a sub-message copied by two calls, one per way of allocating
//     it, has its body inlined twice into the parent.
func TestCloneEqualCompileOnce(t *testing.T) {
	var files []string
	for _, dir := range []string{".", "../../fluidos", "../../edgeproto"} {
		m, err := filepath.Glob(filepath.Join(dir, "*_edgekit.pb.go"))
		if err != nil || len(m) == 0 {
			t.Fatalf("no generated files in %s (%v)", dir, err)
		}
		files = append(files, m...)
	}
	fset := token.NewFileSet()
	var clones, equals int
	for _, name := range files {
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Recv == nil || len(fn.Recv.List) != 1 || len(fn.Recv.List[0].Names) != 1 {
				continue
			}
			recv := fn.Recv.List[0].Names[0].Name
			switch fn.Name.Name {
			case "Equal":
				equals++
				isSet := map[string]int{}
				ast.Inspect(fn.Body, func(n ast.Node) bool {
					if call, ok := n.(*ast.CallExpr); ok {
						if id, ok := call.Fun.(*ast.Ident); ok && strings.HasSuffix(id.Name, "_isSet") {
							isSet[id.Name]++
							if isSet[id.Name] == 2 {
								t.Errorf("%s: %s.Equal calls %s more than once", fset.Position(call.Pos()), typeName(fn), id.Name)
							}
						}
					}
					if sel, ok := n.(*ast.SelectorExpr); ok && sel.Sel.Name == "EqualElem" {
						if x, ok := sel.X.(*ast.Ident); ok && x.Name == "fieldmap" {
							t.Errorf("%s: %s.Equal calls fieldmap.EqualElem", fset.Position(sel.Pos()), typeName(fn))
						}
					}
					return true
				})
			case "cloneTo":
				clones++
				calls := map[string]int{}
				ast.Inspect(fn.Body, func(n ast.Node) bool {
					call, ok := n.(*ast.CallExpr)
					if !ok {
						return true
					}
					sel, ok := call.Fun.(*ast.SelectorExpr)
					if !ok || sel.Sel.Name != "cloneTo" && sel.Sel.Name != "Clone" {
						return true
					}
					// m.F.cloneTo(...) or m.F.Clone(): a copy of field F.
					if field, ok := sel.X.(*ast.SelectorExpr); ok {
						if x, ok := field.X.(*ast.Ident); ok && x.Name == recv {
							calls[field.Sel.Name]++
							if calls[field.Sel.Name] == 2 {
								t.Errorf("%s: %s.cloneTo copies field %s with more than one call", fset.Position(call.Pos()), typeName(fn), field.Sel.Name)
							}
						}
					}
					return true
				})
			}
		}
	}
	if clones == 0 || equals == 0 {
		t.Fatalf("found %d cloneTo and %d Equal methods: the generated files have none?", clones, equals)
	}
}

// typeName is the receiver type of method fn.
func typeName(fn *ast.FuncDecl) string {
	if star, ok := fn.Recv.List[0].Type.(*ast.StarExpr); ok {
		if id, ok := star.X.(*ast.Ident); ok {
			return id.Name
		}
	}
	return "?"
}
