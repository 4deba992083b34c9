package gen_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/edgekit/edgekit/internal/plugintest"
)

// compileCase generates a golden case with protoc-gen-go (every file,
// deps/ included) and protoc-gen-go-edgekit (the files outside deps/) into
// a throwaway module and runs go vet on it, so the output must compile.
func compileCase(t *testing.T, dir string) {
	t.Helper()
	if testing.Short() {
		t.Skip("builds a module")
	}
	all, err := plugintest.Files(dir)
	if err != nil {
		t.Fatal(err)
	}
	var files, deps []string
	for _, f := range all {
		if rest, ok := strings.CutPrefix(f, "deps/"); ok {
			deps = append(deps, rest)
		} else {
			files = append(files, f)
		}
	}
	imports := []string{dir, filepath.Join(dir, "deps"), "../proto"}
	mod := t.TempDir()
	for _, run := range []struct {
		files []string
		g     plugintest.Generator
	}{{append(append([]string{}, files...), deps...), plugintest.Go}, {files, plugintest.Edgekit}} {
		req, err := plugintest.Request(imports, run.files, "")
		if err != nil {
			t.Fatal(err)
		}
		resp, err := plugintest.Run(req, run.g)
		if err != nil || resp.Error != nil {
			t.Fatalf("generate: %v %s", err, resp.GetError())
		}
		for _, f := range resp.File {
			name, ok := strings.CutPrefix(f.GetName(), "example.com/")
			if !ok {
				t.Fatalf("generated file %s outside example.com", f.GetName())
			}
			f.Name = &name
		}
		if err := plugintest.Write(mod, resp); err != nil {
			t.Fatal(err)
		}
	}
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	gomod := "module example.com\n\ngo 1.26\n\nrequire (\n\tgithub.com/edgekit/edgekit v0.0.0\n\tgoogle.golang.org/protobuf v1.36.12\n)\n\nreplace github.com/edgekit/edgekit => " + root + "\n"
	if err := os.WriteFile(filepath.Join(mod, "go.mod"), []byte(gomod), 0o644); err != nil {
		t.Fatal(err)
	}
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(mod, "go.sum"), sum, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("go", "vet", "./...")
	cmd.Dir = mod
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOPROXY=off", "GOWORK=off")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go vet of the generated code: %v\n%s", err, out)
	}
}

// TestImportNamesCompile: dependencies whose Go package names equal the
// receivers, parameters and locals of the generated code, in singular,
// repeated, map and oneof positions, must not break the build.
func TestImportNamesCompile(t *testing.T) {
	t.Parallel()
	compileCase(t, filepath.Join("testdata", "importnames"))
}
