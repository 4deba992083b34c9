// Package plugintest drives protoc-gen-go-edgekit (and protoc-gen-go) in
// process: it compiles .proto sources with protocompile, builds the
// CodeGeneratorRequest protoc or buf would send, and runs the generators on
// it. No protoc or buf binary is needed.
package plugintest

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/bufbuild/protocompile"
	"github.com/bufbuild/protocompile/linker"
	"google.golang.org/protobuf/cmd/protoc-gen-go/internal_gengo"
	"google.golang.org/protobuf/compiler/protogen"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/pluginpb"

	"github.com/edgekit/edgekit/gen"
	_ "github.com/edgekit/edgekit/gen/features/all" // every feature
)

// Request compiles files (paths relative to one of importPaths) and returns
// the request a compiler would send to a plugin with parameter param.
func Request(importPaths, files []string, param string) (*pluginpb.CodeGeneratorRequest, error) {
	c := protocompile.Compiler{
		Resolver: protocompile.WithStandardImports(&protocompile.SourceResolver{ImportPaths: importPaths}),
		// Standard source info, as protoc and buf pass to plugins.
		SourceInfoMode: protocompile.SourceInfoStandard,
	}
	res, err := c.Compile(context.Background(), files...)
	if err != nil {
		return nil, err
	}
	req := &pluginpb.CodeGeneratorRequest{FileToGenerate: files}
	if param != "" {
		req.Parameter = proto.String(param)
	}
	seen := map[string]bool{}
	var add func(fd protoreflect.FileDescriptor)
	add = func(fd protoreflect.FileDescriptor) {
		if seen[fd.Path()] {
			return
		}
		seen[fd.Path()] = true
		imps := fd.Imports()
		for i := 0; i < imps.Len(); i++ {
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

// Files lists the .proto files under dir (relative to dir), sorted.
func Files(dir string) ([]string, error) {
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

// Generator is the body of a protogen plugin.
type Generator func(*protogen.Plugin) error

// Edgekit runs protoc-gen-go-edgekit, which reads its parameter from the
// request.
func Edgekit(p *protogen.Plugin) error { return gen.Run(p) }

// Go runs protoc-gen-go.
func Go(p *protogen.Plugin) error {
	for _, f := range p.Files {
		if f.Generate {
			internal_gengo.GenerateFile(p, f)
		}
	}
	p.SupportedFeatures = internal_gengo.SupportedFeatures
	p.SupportedEditionsMinimum = internal_gengo.SupportedEditionsMinimum
	p.SupportedEditionsMaximum = internal_gengo.SupportedEditionsMaximum
	return nil
}

// Run runs a generator on req as a plugin binary would, returning the
// response (whose Error is set on failure).
func Run(req *pluginpb.CodeGeneratorRequest, g Generator) (*pluginpb.CodeGeneratorResponse, error) {
	// Round-trip through the wire format, as a plugin binary reads its
	// request: custom options this binary knows become known extensions,
	// the others stay unknown fields.
	b, err := proto.Marshal(req)
	if err != nil {
		return nil, err
	}
	req = &pluginpb.CodeGeneratorRequest{}
	if err := proto.Unmarshal(b, req); err != nil {
		return nil, err
	}
	// protogen applies protoc-gen-go's parameters and passes over the
	// others, which the generator reads from the request.
	p, err := protogen.Options{}.New(req)
	if err != nil {
		return nil, err
	}
	if err := g(p); err != nil {
		p.Error(err)
	}
	return p.Response(), nil
}

// Write writes the files of resp under dir.
func Write(dir string, resp *pluginpb.CodeGeneratorResponse) error {
	for _, f := range resp.GetFile() {
		p := filepath.Join(dir, f.GetName())
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, []byte(f.GetContent()), 0o644); err != nil {
			return err
		}
	}
	return nil
}
