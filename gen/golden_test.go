package gen_test

import (
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/edgekit/edgekit/internal/plugintest"
)

var update = flag.Bool("update", false, "rewrite the golden files of gen/testdata")

// TestGolden runs the plugin on every case of testdata/<case>/: the .proto
// files of the case (deps/ holds imports that are not generated) with the
// parameter of param.txt. A case named bad_* must fail with the diagnostics
// of want.err; any other must produce exactly the files under want/.
func TestGolden(t *testing.T) {
	cases, err := os.ReadDir("testdata")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		if !c.IsDir() {
			continue
		}
		t.Run(c.Name(), func(t *testing.T) {
			runGolden(t, filepath.Join("testdata", c.Name()), strings.HasPrefix(c.Name(), "bad_"))
		})
	}
}

func runGolden(t *testing.T, dir string, bad bool) {
	all, err := plugintest.Files(dir)
	if err != nil {
		t.Fatal(err)
	}
	var files []string
	for _, f := range all {
		if !strings.HasPrefix(f, "deps/") {
			files = append(files, f)
		}
	}
	req, err := plugintest.Request([]string{dir, filepath.Join(dir, "deps"), "../proto"}, files, readParam(t, dir))
	if err != nil {
		t.Fatalf("compile: %v", err)
	}
	resp, err := plugintest.Run(req, plugintest.Edgekit)
	if err != nil {
		t.Fatal(err)
	}
	if bad {
		if resp.Error == nil {
			t.Fatalf("plugin succeeded; want a diagnostic")
		}
		checkGolden(t, filepath.Join(dir, "want.err"), resp.GetError()+"\n")
		return
	}
	if resp.Error != nil {
		t.Fatalf("plugin failed: %s", resp.GetError())
	}
	wantDir := filepath.Join(dir, "want")
	got := map[string]bool{}
	for _, f := range resp.File {
		got[f.GetName()] = true
		checkGolden(t, filepath.Join(wantDir, f.GetName()), f.GetContent())
	}
	// Every golden file must still be produced.
	var stale []string
	filepath.WalkDir(wantDir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(wantDir, p)
			if !got[filepath.ToSlash(rel)] {
				stale = append(stale, p)
			}
		}
		return nil
	})
	slices.Sort(stale)
	for _, p := range stale {
		if *update {
			os.Remove(p)
			continue
		}
		t.Errorf("%s: golden file no longer generated (run go test ./gen/... -update)", p)
	}
}

// readParam returns the plugin parameter of the case in dir, from its
// param.txt, or "".
func readParam(t *testing.T, dir string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "param.txt"))
	if os.IsNotExist(err) {
		return ""
	}
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}

func checkGolden(t *testing.T, path, got string) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./gen/... -update)", err)
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Errorf("%s differs from the golden file (-want +got; run go test ./gen/... -update to accept):\n%s", path, diff)
	}
}
