// Package reftest compiles the test protos of the reference implementation
// in process with protocompile, so that tests of the reference, of randmsg
// and of generated code can build dynamic messages (dynamicpb) without
// generated code.
//
// The protos live in testdata/ and are importable as "reftest/<file>"; the
// generator options are importable as "edgekit/options/v1/options.proto",
// and the standard imports (google/protobuf/...) are available.
package reftest

import (
	"context"
	"embed"
	"fmt"
	"io"
	"io/fs"
	"path"
	"strings"
	"sync"

	"github.com/bufbuild/protocompile"
	"github.com/bufbuild/protocompile/linker"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"

	optionsv1 "github.com/edgekit/edgekit/proto/edgekit/options/v1"
)

//go:embed testdata/*.proto
var testdata embed.FS

// OptionsPath is the import path of the generator options.
const OptionsPath = "edgekit/options/v1/options.proto"

// OptionsMode says how a compilation sees the generator options proto.
type OptionsMode int

const (
	// OptionsFromProto compiles the options from a descriptor proto: option
	// values in the result have dynamic extension types, as for any
	// descriptor built at run time.
	OptionsFromProto OptionsMode = iota
	// OptionsLinked links the compiled files against the generated options
	// descriptor.
	OptionsLinked
)

// Compile compiles files (import paths) found in sources (import path to
// content) or among the test protos, with source info.
func Compile(mode OptionsMode, sources map[string]string, files ...string) (linker.Files, error) {
	resolver := protocompile.ResolverFunc(func(p string) (protocompile.SearchResult, error) {
		if src, ok := sources[p]; ok {
			return protocompile.SearchResult{Source: strings.NewReader(src)}, nil
		}
		if p == OptionsPath {
			if mode == OptionsLinked {
				return protocompile.SearchResult{Desc: optionsv1.File_edgekit_options_v1_options_proto}, nil
			}
			return protocompile.SearchResult{Proto: protodesc.ToFileDescriptorProto(optionsv1.File_edgekit_options_v1_options_proto)}, nil
		}
		if rest, ok := strings.CutPrefix(p, "reftest/"); ok {
			f, err := testdata.Open(path.Join("testdata", rest))
			if err != nil {
				return protocompile.SearchResult{}, err
			}
			return protocompile.SearchResult{Source: readCloser{f}}, nil
		}
		return protocompile.SearchResult{}, fs.ErrNotExist
	})
	c := protocompile.Compiler{
		Resolver:       protocompile.WithStandardImports(resolver),
		SourceInfoMode: protocompile.SourceInfoStandard,
	}
	return c.Compile(context.Background(), files...)
}

// readCloser adapts an fs.File to the io.Reader protocompile wants and
// closes it once read to the end.
type readCloser struct{ f fs.File }

func (r readCloser) Read(p []byte) (int, error) {
	n, err := r.f.Read(p)
	if err == io.EOF {
		r.f.Close()
	}
	return n, err
}

// TestFiles lists the test protos, as import paths.
func TestFiles() []string {
	ents, _ := fs.ReadDir(testdata, "testdata")
	var out []string
	for _, e := range ents {
		out = append(out, "reftest/"+e.Name())
	}
	return out
}

var all = sync.OnceValues(func() (linker.Files, error) {
	return Compile(OptionsFromProto, nil, TestFiles()...)
})

// Files returns the test protos, compiled once (options from a descriptor
// proto).
func Files() (linker.Files, error) { return all() }

// Message returns the descriptor of a message of the test protos by full
// name ("reftest.v1.Top").
func Message(name protoreflect.FullName) (protoreflect.MessageDescriptor, error) {
	files, err := Files()
	if err != nil {
		return nil, err
	}
	d, err := files.AsResolver().FindDescriptorByName(name)
	md, ok := d.(protoreflect.MessageDescriptor)
	if err != nil || !ok {
		return nil, fmt.Errorf("reftest: no message %s in the test protos", name)
	}
	return md, nil
}

// MustMessage is Message for package-level test setup; it panics when the
// message does not exist.
func MustMessage(name protoreflect.FullName) protoreflect.MessageDescriptor {
	md, err := Message(name)
	if err != nil {
		panic(err)
	}
	return md
}

// Messages returns every top-level message of the test protos, in file and
// declaration order: the types property tests iterate over.
func Messages() ([]protoreflect.MessageDescriptor, error) {
	files, err := Files()
	if err != nil {
		return nil, err
	}
	var out []protoreflect.MessageDescriptor
	for _, f := range files {
		mds := f.Messages()
		for i := 0; i < mds.Len(); i++ {
			out = append(out, mds.Get(i))
		}
	}
	return out, nil
}
