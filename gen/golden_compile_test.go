package gen_test

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/edgekit/edgekit/gen"
	"github.com/edgekit/edgekit/internal/plugintest"
)

// goldenModule is the module path every golden case's Go packages lie
// under, so that all of them fit in one temporary module.
const goldenModule = "example.com"

// TestGoldenCompiles writes the golden files of every case that generates
// (testdata/<case>/want) into one temporary module, beside protoc-gen-go's
// output for the case's protos, and runs go vet on it once: a golden file
// that does not compile or vet fails the test, named by its path under
// testdata. Then it compiles one case against a fieldmap without
// fieldmap.SupportPackageIsVersion5, as an older runtime is, and expects
// the build to fail naming that constant.
func TestGoldenCompiles(t *testing.T) {
	t.Parallel()
	cases, err := os.ReadDir("testdata")
	if err != nil {
		t.Fatal(err)
	}
	mod := t.TempDir()
	origin := map[string]string{} // file in mod -> the golden file it is, or the case it comes from
	write := func(name, content, from string) {
		t.Helper()
		rel, ok := strings.CutPrefix(name, goldenModule+"/")
		if !ok {
			t.Fatalf("%s: generates %s, outside %s/: give the case's go_package a path under %s/", from, name, goldenModule, goldenModule)
		}
		if prev, ok := origin[rel]; ok {
			t.Fatalf("%s and %s both generate %s: give each golden case Go packages of its own", prev, from, name)
		}
		origin[rel] = from
		p := filepath.Join(mod, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range cases {
		if !c.IsDir() || strings.HasPrefix(c.Name(), "bad_") {
			continue
		}
		dir := filepath.Join("testdata", c.Name())
		files, err := plugintest.Files(dir)
		if err != nil {
			t.Fatal(err)
		}
		// protoc-gen-go's output for every proto of the case, and
		// protoc-gen-go-edgekit's for those of deps/ (imported as if deps/
		// were an import path): what the other runs of a real pipeline
		// would generate, which the golden files may call.
		var protos, deps []string
		for _, f := range files {
			protos = append(protos, strings.TrimPrefix(f, "deps/"))
			if d, ok := strings.CutPrefix(f, "deps/"); ok {
				deps = append(deps, d)
			}
		}
		importPaths := []string{dir, filepath.Join(dir, "deps"), "../proto"}
		runs := []struct {
			files []string
			g     plugintest.Generator
		}{{protos, plugintest.Go}, {deps, plugintest.Edgekit}}
		for _, r := range runs {
			if len(r.files) == 0 {
				continue
			}
			req, err := plugintest.Request(importPaths, r.files, readParam(t, dir))
			if err != nil {
				t.Fatalf("%s: compile: %v", dir, err)
			}
			resp, err := plugintest.Run(req, r.g)
			if err != nil || resp.Error != nil {
				t.Fatalf("%s: generate: %v %s", dir, err, resp.GetError())
			}
			for _, f := range resp.File {
				write(f.GetName(), f.GetContent(), dir)
			}
		}
		want := filepath.Join(dir, "want")
		err = filepath.WalkDir(want, func(p string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			rel, err := filepath.Rel(want, p)
			write(filepath.ToSlash(rel), string(b), p)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	writeGoMod(t, mod)

	if out, err := goCmd(mod, "vet", "./...").CombinedOutput(); err != nil {
		t.Fatalf("go vet of the golden files failed:\n%s", toGolden(string(out), mod, origin))
	}

	// An older fieldmap, without the constant, fails the build naming it.
	overlay := filepath.Join(t.TempDir(), "overlay.json")
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(map[string]map[string]string{"Replace": {filepath.Join(root, "fieldmap", "version.go"): ""}})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(overlay, b, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := goCmd(mod, "build", "-overlay", overlay, "./golden/nested").CombinedOutput()
	if want := "undefined: fieldmap." + gen.SupportConst; err == nil || !strings.Contains(string(out), want) {
		t.Fatalf("building against a fieldmap without %s: err %v, output:\n%s\nwant an error holding %q", gen.SupportConst, err, out, want)
	}
}

// writeGoMod makes mod a module that builds against this repository.
func writeGoMod(t *testing.T, mod string) {
	t.Helper()
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	goVersion := "1.26.0"
	if b, err := os.ReadFile(filepath.Join(root, "go.mod")); err == nil {
		if m := regexp.MustCompile(`(?m)^go (\S+)$`).FindSubmatch(b); m != nil {
			goVersion = string(m[1])
		}
	}
	gomod := fmt.Sprintf("module %s\n\ngo %s\n\nrequire %s v0.0.0\n\nreplace %s => %s\n", goldenModule, goVersion, gen.ModulePath, gen.ModulePath, root)
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
}

// goCmd runs the go command in mod, resolving modules from the module
// cache only.
func goCmd(mod string, args ...string) *exec.Cmd {
	cmd := exec.Command("go", args...)
	cmd.Dir = mod
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOWORK=off", "GOPROXY=off")
	return cmd
}

// toGolden rewrites the paths of files in mod in go command output to the
// golden files they are.
func toGolden(out, mod string, origin map[string]string) string {
	for rel, from := range origin {
		if strings.HasSuffix(from, ".go") {
			out = strings.ReplaceAll(out, filepath.FromSlash(rel), from)
		}
	}
	return strings.ReplaceAll(out, mod+string(filepath.Separator), "")
}
