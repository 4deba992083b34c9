package gen

import "google.golang.org/protobuf/compiler/protogen"

// ElemEqualFunc returns a Go func value comparing two elements of f (list
// elements, or map values) under proto.Equal's rules, or "" when == does.
func (g *GeneratedFile) ElemEqualFunc(f *protogen.Field) string { return g.elemEqualFunc(f) }

// ElemCloneFunc returns a Go func value deep-copying one element of f (list
// element, or map value), or "" when assignment copies it.
func (g *GeneratedFile) ElemCloneFunc(f *protogen.Field) string { return g.elemCloneFunc(f) }
