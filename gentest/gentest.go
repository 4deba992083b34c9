// Package gentest golden-tests what protoc-gen-go-edgekit generates for
// your own .proto files, inside go test: it compiles them in process (with
// github.com/bufbuild/protocompile; no protoc or buf binary is needed), runs
// the plugin on them as protoc would, and compares every generated file with
// a checked-in copy, the golden file. Run the test with -update to rewrite
// the golden files after an intended change, and review the diff.
//
//	var update = flag.Bool("update", false, "rewrite the golden files")
//
//	func TestGenerated(t *testing.T) {
//		gentest.Check(t, gentest.Config{
//			ImportPaths: []string{"proto"},         // as protoc's -I
//			Parameter:   "paths=source_relative", // as --go-edgekit_opt
//			Golden:      "testdata/golden",
//			Update:      *update,
//		})
//	}
//
// The edgekit options (import "edgekit/options/v1/options.proto") and the
// well-known types resolve without being on an import path. Golden files
// are exactly what the plugin writes, header included, so the header's
// version changes when the edgekit module is upgraded: -update accepts it.
//
// Check fails the test when a generated file differs from its golden file,
// when a golden file is missing, and when a golden file (a file under
// Golden ending in _edgekit.pb.go) is no longer generated; -update writes
// the first two and removes the last. Bad input to the plugin (a name
// clash, an unknown option value) fails the test with the plugin's
// diagnostics; Generate returns them as an error, for tests of bad input.
package gentest

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"

	"github.com/bufbuild/protocompile"
	"github.com/bufbuild/protocompile/linker"
	"google.golang.org/protobuf/compiler/protogen"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/pluginpb"

	"github.com/edgekit/edgekit/gen"
	_ "github.com/edgekit/edgekit/gen/features/all" // the plugin's features
	optionsv1 "github.com/edgekit/edgekit/proto/edgekit/options/v1"
)

// Config says which protos to generate code for, how, and where their
// golden files are.
type Config struct {
	// ImportPaths are the directories imports resolve against, as protoc's
	// -I flags or the roots of buf modules.
	ImportPaths []string
	// Files are the .proto files to generate, relative to an import path.
	// Empty means every .proto file under the first import path.
	Files []string
	// Parameter is the plugin parameter, as given to protoc's
	// --go-edgekit_opt or buf's opt, entries joined by ",":
	// "paths=source_relative,features=fields+clone". Empty means the
	// plugin's defaults.
	Parameter string
	// Golden is the directory of the golden files, laid out as the plugin
	// names its files (by Go import path, or as the .proto files with
	// paths=source_relative). Empty means "testdata/golden".
	Golden string
	// Update makes Check rewrite the golden files instead of comparing
	// them; set it from a flag of your test, as in the package example.
	Update bool
}

// ErrPlugin is matched (errors.Is) by the error of Generate when the plugin
// refused the input; the error's text is the plugin's diagnostics.
var ErrPlugin = errors.New("protoc-gen-go-edgekit failed")

// Generate compiles the files of c, runs protoc-gen-go-edgekit on them and
// returns the generated files' contents by name. A .proto that does not
// compile is an error naming it; input the plugin refuses is an error
// matching ErrPlugin holding its diagnostics
// ("file.proto:line:col: what is wrong").
func Generate(c Config) (map[string]string, error) {
	req, err := Request(c)
	if err != nil {
		return nil, err
	}
	resp, err := RunPlugin(req, gen.Run)
	if err != nil {
		return nil, err
	}
	if resp.Error != nil {
		return nil, fmt.Errorf("%w:\n%s", ErrPlugin, resp.GetError())
	}
	out := make(map[string]string, len(resp.File))
	for _, f := range resp.File {
		out[f.GetName()] = f.GetContent()
	}
	return out, nil
}

// Request compiles the files of c and returns the CodeGeneratorRequest
// protoc or buf would send a plugin for them, with c.Parameter: every file
// to generate and its imports, with source info.
func Request(c Config) (*pluginpb.CodeGeneratorRequest, error) {
	if len(c.ImportPaths) == 0 {
		return nil, errors.New("gentest: Config.ImportPaths is empty: give the directories the .proto files are in, as protoc's -I")
	}
	files := c.Files
	if len(files) == 0 {
		var err error
		if files, err = ProtoFiles(c.ImportPaths[0]); err != nil {
			return nil, err
		}
		if len(files) == 0 {
			return nil, fmt.Errorf("gentest: no .proto file under %s", c.ImportPaths[0])
		}
	}
	compiler := protocompile.Compiler{
		Resolver: protocompile.WithStandardImports(protocompile.CompositeResolver{
			&protocompile.SourceResolver{ImportPaths: c.ImportPaths},
			protocompile.ResolverFunc(edgekitOptions),
		}),
		// Standard source info, as protoc and buf pass to plugins.
		SourceInfoMode: protocompile.SourceInfoStandard,
	}
	res, err := compiler.Compile(context.Background(), files...)
	if err != nil {
		return nil, err
	}
	req := &pluginpb.CodeGeneratorRequest{FileToGenerate: files}
	if c.Parameter != "" {
		req.Parameter = proto.String(c.Parameter)
	}
	seen := map[string]bool{}
	var add func(fd protoreflect.FileDescriptor)
	add = func(fd protoreflect.FileDescriptor) {
		if seen[fd.Path()] {
			return
		}
		seen[fd.Path()] = true
		imps := fd.Imports()
		for i := range imps.Len() {
			add(imps.Get(i).FileDescriptor)
		}
		fdp := protodesc.ToFileDescriptorProto(fd)
		req.ProtoFile = append(req.ProtoFile, fdp)
		if slices.Contains(files, fd.Path()) {
			req.SourceFileDescriptors = append(req.SourceFileDescriptors, fdp)
		}
	}
	for _, f := range res {
		add(f.(linker.File))
	}
	return req, nil
}

// edgekitOptions resolves the edgekit options file from the descriptor
// compiled into this package, for protos that import it without a copy on
// an import path.
func edgekitOptions(path string) (protocompile.SearchResult, error) {
	if fd := optionsv1.File_edgekit_options_v1_options_proto; path == fd.Path() {
		return protocompile.SearchResult{Desc: fd}, nil
	}
	return protocompile.SearchResult{}, protoregistry.NotFound
}

// RunPlugin runs body, the body of a protogen plugin (gen.Run for
// protoc-gen-go-edgekit), on req as a plugin binary would and returns its
// response, whose Error is set when body failed. The request goes through
// the wire format first, as a binary reads it, so custom options the binary
// knows become known extensions and the others stay unknown fields.
// protogen applies protoc-gen-go's parameters (module, paths, M<file>...);
// body reads the others from the request.
func RunPlugin(req *pluginpb.CodeGeneratorRequest, body func(*protogen.Plugin) error) (*pluginpb.CodeGeneratorResponse, error) {
	b, err := proto.Marshal(req)
	if err != nil {
		return nil, err
	}
	req = &pluginpb.CodeGeneratorRequest{}
	if err := proto.Unmarshal(b, req); err != nil {
		return nil, err
	}
	p, err := protogen.Options{}.New(req)
	if err != nil {
		return nil, err
	}
	if err := body(p); err != nil {
		p.Error(err)
	}
	return p.Response(), nil
}

// ProtoFiles lists the .proto files under dir, as paths relative to dir
// with "/" separators, sorted.
func ProtoFiles(dir string) ([]string, error) {
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(p, ".proto") {
			rel, err := filepath.Rel(dir, p)
			if err != nil {
				return err
			}
			out = append(out, filepath.ToSlash(rel))
		}
		return nil
	})
	slices.Sort(out)
	return out, err
}
