package gogocompat

import (
	"bytes"
	"fmt"
	"os/exec"
	"path"
	"path/filepath"
	"strings"

	gogoproto "github.com/gogo/protobuf/proto"
	gogoplugin "github.com/gogo/protobuf/protoc-gen-gogo/plugin"
	"github.com/gogo/protobuf/vanity/command"
	"google.golang.org/protobuf/proto"

	"github.com/edgekit/edgekit/gentest"
	"github.com/edgekit/edgekit/internal/plugintest"
)

// Source is the proto both sides are generated from, relative to the
// import path "proto" of this package's directory.
const Source = "gogocompat/v1/compat.proto"

// Go packages of the two sides. The proto's go_package names the
// protoc-gen-go side; for gogo's run it names gogo's package instead, and
// gogo's well-known types replace the standard ones, as gogo users have
// them.
const (
	GoPackage   = "github.com/edgekit/edgekit/internal/gogocompat/edgekitpb"
	GogoPackage = "github.com/edgekit/edgekit/internal/gogocompat/gogopb"
)

var gogoParams = []string{
	"paths=source_relative",
	"Mgogoproto/gogo.proto=github.com/gogo/protobuf/gogoproto",
	"Mgoogle/protobuf/duration.proto=github.com/gogo/protobuf/types",
	"Mgoogle/protobuf/timestamp.proto=github.com/gogo/protobuf/types",
}

// Generate generates both sides from Source: gogo's protoc-gen-gogo output
// (gogopb/compat.pb.go), and protoc-gen-go's and protoc-gen-go-edgekit's
// (edgekitpb/compat.pb.go, edgekitpb/compat_edgekit.pb.go). It returns the
// files by path relative to dir, the directory of this package, where the
// protos are (proto/) and where go generate writes them. gogoproto/gogo.proto
// is read from the module cache's copy of github.com/gogo/protobuf, at the
// version go.mod pins.
func Generate(dir string) (map[string]string, error) {
	gogoDir, err := moduleDir(dir, "github.com/gogo/protobuf")
	if err != nil {
		return nil, err
	}
	cfg := gentest.Config{ImportPaths: []string{filepath.Join(dir, "proto"), gogoDir}, Files: []string{Source}}
	out := map[string]string{}
	base := strings.TrimSuffix(path.Base(Source), ".proto")

	// protoc-gen-go, then protoc-gen-go-edgekit, as buf runs them.
	cfg.Parameter = "paths=source_relative"
	req, err := gentest.Request(cfg)
	if err != nil {
		return nil, err
	}
	for _, g := range []plugintest.Generator{plugintest.Go, plugintest.Edgekit} {
		resp, err := plugintest.Run(req, g)
		if err != nil {
			return nil, err
		}
		if resp.Error != nil {
			return nil, fmt.Errorf("%s: %s", Source, resp.GetError())
		}
		for _, f := range resp.File {
			out["edgekitpb/"+path.Base(f.GetName())] = f.GetContent()
		}
	}

	// gogo's generator reads gogo's own descriptor types: the request
	// crosses over through the wire format, as it would through protoc.
	cfg.Parameter = strings.Join(gogoParams, ",")
	req, err = gentest.Request(cfg)
	if err != nil {
		return nil, err
	}
	for _, fdp := range req.ProtoFile {
		if fdp.GetName() == Source {
			fdp.Options.GoPackage = proto.String(GogoPackage + ";gogopb")
		}
	}
	b, err := proto.Marshal(req)
	if err != nil {
		return nil, err
	}
	var gogoReq gogoplugin.CodeGeneratorRequest
	if err := gogoproto.Unmarshal(b, &gogoReq); err != nil {
		return nil, err
	}
	resp := command.Generate(&gogoReq)
	if resp.Error != nil {
		return nil, fmt.Errorf("%s: protoc-gen-gogo: %s", Source, resp.GetError())
	}
	for _, f := range resp.File {
		if f.GetName() != strings.TrimSuffix(Source, ".proto")+".pb.go" {
			return nil, fmt.Errorf("protoc-gen-gogo generated %s, want only the file of %s", f.GetName(), Source)
		}
		out["gogopb/"+base+".pb.go"] = f.GetContent()
	}
	return out, nil
}

// moduleDir returns the directory of module mod in the build list of the
// module holding dir.
func moduleDir(dir, mod string) (string, error) {
	cmd := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", mod)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	b, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("go list -m %s: %w: %s", mod, err, stderr.String())
	}
	d := strings.TrimSpace(string(b))
	if d == "" {
		return "", fmt.Errorf("module %s is not in the module cache: run go mod download", mod)
	}
	return d, nil
}
