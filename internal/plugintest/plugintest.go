// Package plugintest drives protoc-gen-go-edgekit and protoc-gen-go in
// process for this repository's tests: it compiles .proto sources with
// protocompile and runs either generator on the request protoc or buf would
// send, with no protoc or buf binary. It is the public gentest package plus
// protoc-gen-go, which only this repository's tests need.
package plugintest

import (
	"os"
	"path/filepath"

	"google.golang.org/protobuf/cmd/protoc-gen-go/internal_gengo"
	"google.golang.org/protobuf/compiler/protogen"
	"google.golang.org/protobuf/types/pluginpb"

	"github.com/edgekit/edgekit/gen"
	"github.com/edgekit/edgekit/gentest"
)

// Request compiles files (paths relative to one of importPaths) and returns
// the request a compiler would send to a plugin with parameter param.
func Request(importPaths, files []string, param string) (*pluginpb.CodeGeneratorRequest, error) {
	return gentest.Request(gentest.Config{ImportPaths: importPaths, Files: files, Parameter: param})
}

// Files lists the .proto files under dir (relative to dir), sorted.
func Files(dir string) ([]string, error) { return gentest.ProtoFiles(dir) }

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
	return gentest.RunPlugin(req, g)
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
