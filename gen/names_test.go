package gen

import (
	"context"
	"strings"
	"testing"

	"github.com/bufbuild/protocompile"
	"google.golang.org/protobuf/compiler/protogen"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/pluginpb"
)

// TestDeclaredNamesAreChecked registers a feature the engine has never
// heard of and checks that the names it declares are held to the clash
// checks: the engine keeps no list of its own.
func TestDeclaredNamesAreChecked(t *testing.T) {
	// Not parallel: it swaps the registry, which parallel tests only read
	// after every sequential test has run.
	savedRegistry, savedNames := registry, declaredNames
	registry, declaredNames = nil, map[string]NamesFunc{}
	t.Cleanup(func() { registry, declaredNames = savedRegistry, savedNames })

	Register("probe", func(*GeneratedFile) Feature { return nopFeature{} })
	DeclareNames("probe", func(mm *Message) Names {
		return Names{
			Methods: []string{"Probe"},
			Package: []PackageName{{Name: mm.GoIdent.GoName + "Probe", Desc: mm.Desc}},
		}
	})

	const src = `syntax = "proto3";
package p;
option go_package = "example.com/p";
message M {
  string probe = 1;
}
message MProbe {}
`
	err := Generate(plugin(t, "p.proto", src), Options{Features: []string{"probe"}})
	for _, want := range []string{
		`p.proto:5:3: field probe clashes with the Probe method of feature "probe"`,
		"p.proto:4:1: generated name MProbe clashes with MProbe declared by protoc-gen-go for p.MProbe",
	} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v; want it to hold %q", err, want)
		}
	}
}

type nopFeature struct{}

func (nopFeature) GenerateFile(*protogen.File) bool { return false }

// plugin compiles one proto file and returns the plugin protoc would run
// on it.
func plugin(t *testing.T, name, src string) *protogen.Plugin {
	t.Helper()
	c := protocompile.Compiler{
		Resolver: protocompile.WithStandardImports(&protocompile.SourceResolver{
			Accessor: protocompile.SourceAccessorFromMap(map[string]string{name: src}),
		}),
		SourceInfoMode: protocompile.SourceInfoStandard,
	}
	files, err := c.Compile(context.Background(), name)
	if err != nil {
		t.Fatal(err)
	}
	req := &pluginpb.CodeGeneratorRequest{
		FileToGenerate: []string{name},
		ProtoFile:      []*descriptorpb.FileDescriptorProto{protodesc.ToFileDescriptorProto(files[0])},
	}
	p, err := protogen.Options{}.New(req)
	if err != nil {
		t.Fatal(err)
	}
	return p
}
