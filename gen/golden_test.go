package gen_test

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/edgekit/edgekit/gentest"
)

var update = flag.Bool("update", false, "rewrite the golden files of gen/testdata")

// TestGolden runs the plugin on every case of testdata/<case>/: the .proto
// files of the case (deps/ holds imports that are not generated) with the
// parameter of param.txt. A case named bad_* must fail with the diagnostics
// of want.err; any other must produce exactly the files under want/, as
// gentest.Check holds them (the way users test their own protos).
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
	all, err := gentest.ProtoFiles(dir)
	if err != nil {
		t.Fatal(err)
	}
	var files []string
	for _, f := range all {
		if !strings.HasPrefix(f, "deps/") {
			files = append(files, f)
		}
	}
	cfg := gentest.Config{
		ImportPaths: []string{dir, filepath.Join(dir, "deps"), "../proto"},
		Files:       files,
		Parameter:   readParam(t, dir),
		Golden:      filepath.Join(dir, "want"),
		Update:      *update,
	}
	if !bad {
		gentest.Check(t, cfg)
		return
	}
	_, err = gentest.Generate(cfg)
	diag, ok := strings.CutPrefix(errString(err), gentest.ErrPlugin.Error()+":\n")
	if !ok {
		t.Fatalf("got %v; want the plugin's diagnostics", err)
	}
	checkErr(t, filepath.Join(dir, "want.err"), diag+"\n")
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
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

// checkErr compares the diagnostics of a bad case with its want.err.
func checkErr(t *testing.T, path, got string) {
	t.Helper()
	if *update {
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
