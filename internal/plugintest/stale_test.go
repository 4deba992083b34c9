package plugintest_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/edgekit/edgekit/internal/plugintest"
)

// repoRoot is the module root, relative to this package.
const repoRoot = "../.."

// protoRoots are the buf modules of buf.yaml.
var protoRoots = []string{"proto", "internal/testpb/proto"}

// goGenerated are the directories whose generated code go generate writes
// rather than buf; their own tests hold it fresh.
var goGenerated = []string{"internal/gogocompat", "internal/testpb/vtbench"}

// TestGeneratedCodeIsFresh regenerates every checked-in *.pb.go and
// *_edgekit.pb.go in process (protoc-gen-go and protoc-gen-go-edgekit, one
// run per proto directory as buf runs local plugins) and fails when a file on
// disk differs, is missing, or no longer has a source. Fix with make generate.
func TestGeneratedCodeIsFresh(t *testing.T) {
	want := map[string]string{} // path from repo root -> content
	for _, root := range protoRoots {
		dir := filepath.Join(repoRoot, root)
		files, err := plugintest.Files(dir)
		if err != nil {
			t.Fatal(err)
		}
		byDir := map[string][]string{}
		for _, f := range files {
			byDir[filepath.Dir(f)] = append(byDir[filepath.Dir(f)], f)
		}
		var importPaths []string
		for _, r := range protoRoots {
			importPaths = append(importPaths, filepath.Join(repoRoot, r))
		}
		for _, group := range byDir {
			req, err := plugintest.Request(importPaths, group, "module=github.com/edgekit/edgekit")
			if err != nil {
				t.Fatalf("compile %v: %v", group, err)
			}
			for _, g := range []plugintest.Generator{plugintest.Go, plugintest.Edgekit} {
				resp, err := plugintest.Run(req, g)
				if err != nil {
					t.Fatal(err)
				}
				if resp.Error != nil {
					t.Fatalf("generate %v: %s", group, resp.GetError())
				}
				for _, f := range resp.File {
					want[f.GetName()] = f.GetContent()
				}
			}
		}
	}
	for name, content := range want {
		got, err := os.ReadFile(filepath.Join(repoRoot, name))
		if err != nil {
			t.Errorf("%s: missing (run make generate)", name)
			continue
		}
		if string(got) != content {
			t.Errorf("%s: stale, differs from what the generators produce now (run make generate)", name)
		}
	}
	// Generated files on disk that nothing generates any more.
	var orphans []string
	filepath.WalkDir(repoRoot, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(repoRoot, p)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			// Hidden directories, and testdata: golden files of tests.
			if strings.HasPrefix(d.Name(), ".") && rel != "." || d.Name() == "testdata" || slices.Contains(goGenerated, rel) {
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(rel, ".pb.go") && !strings.HasSuffix(rel, "_grpc.pb.go") {
			if _, ok := want[rel]; !ok {
				orphans = append(orphans, rel)
			}
		}
		return nil
	})
	slices.Sort(orphans)
	for _, o := range orphans {
		t.Errorf("%s: generated file without a source .proto (remove it)", o)
	}
}
