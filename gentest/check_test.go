package gentest_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/edgekit/edgekit/gentest"
)

// recorder is a testing.TB that records failures instead of failing.
type recorder struct {
	testing.TB
	errs  []string
	fatal bool
}

func (r *recorder) Helper() {}

func (r *recorder) Errorf(format string, args ...any) {
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}

func (r *recorder) Fatalf(format string, args ...any) {
	r.Errorf(format, args...)
	r.fatal = true
	runtimeGoexit()
}

// check runs gentest.Check with a recorder, on a goroutine of its own so
// that Fatalf can end it.
func check(t *testing.T, c gentest.Config) *recorder {
	r := &recorder{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		gentest.Check(r, c)
	}()
	<-done
	return r
}

// goldenCopy copies the package's golden files into a directory of their
// own and returns it.
func goldenCopy(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	b, err := os.ReadFile("testdata/golden/shop/v1/shop_edgekit.pb.go")
	if err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(dir, "shop/v1/shop_edgekit.pb.go"), string(b))
	return dir
}

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func config(golden string, update bool) gentest.Config {
	return gentest.Config{ImportPaths: []string{"testdata/proto"}, Parameter: "paths=source_relative", Golden: golden, Update: update}
}

func TestCheckReportsDifferences(t *testing.T) {
	t.Parallel()
	golden := goldenCopy(t)
	if r := check(t, config(golden, false)); len(r.errs) != 0 {
		t.Fatalf("identical golden files: %q", r.errs)
	}

	file := filepath.Join(golden, "shop/v1/shop_edgekit.pb.go")
	b, _ := os.ReadFile(file)
	write(t, file, strings.Replace(string(b), "GetKeyString", "GetKeyStrung", 1))
	stale := filepath.Join(golden, "shop/v1/gone_edgekit.pb.go")
	write(t, stale, "package shopv1\n")
	other := filepath.Join(golden, "README.md") // not generated output: left alone
	write(t, other, "notes\n")

	r := check(t, config(golden, false))
	if len(r.errs) != 2 || r.fatal ||
		!strings.Contains(r.errs[0], "shop/v1/shop_edgekit.pb.go differs from its golden file") || !strings.Contains(r.errs[0], "\n- // GetKeyStrung renders") || !strings.Contains(r.errs[0], "\n+ // GetKeyString renders") ||
		!strings.Contains(r.errs[1], "gone_edgekit.pb.go is no longer generated") {
		t.Fatalf("failures %q; want the difference and the stale file", r.errs)
	}

	// -update rewrites the file and removes the stale one; then all agree.
	if r := check(t, config(golden, true)); len(r.errs) != 0 {
		t.Fatalf("update: %q", r.errs)
	}
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("stale golden file still there: %v", err)
	}
	if _, err := os.Stat(other); err != nil {
		t.Errorf("update removed a file that is not generated output: %v", err)
	}
	if r := check(t, config(golden, false)); len(r.errs) != 0 {
		t.Fatalf("after update: %q", r.errs)
	}
}

func TestCheckReportsMissingGolden(t *testing.T) {
	t.Parallel()
	golden := t.TempDir()
	r := check(t, config(golden, false))
	if len(r.errs) != 1 || !strings.Contains(r.errs[0], "shop/v1/shop_edgekit.pb.go is generated but has no golden file") {
		t.Fatalf("failures %q; want the missing golden file", r.errs)
	}
	// An absent golden directory is the same, and update creates it.
	golden = filepath.Join(golden, "new")
	if r := check(t, config(golden, true)); len(r.errs) != 0 {
		t.Fatalf("update into a new directory: %q", r.errs)
	}
	if r := check(t, config(golden, false)); len(r.errs) != 0 {
		t.Fatalf("after update: %q", r.errs)
	}
}

func TestCheckFailsOnBadInput(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		cfg  gentest.Config
		want string
	}{
		{"refused by the plugin", gentest.Config{ImportPaths: []string{"testdata/bad"}, Golden: t.TempDir()}, "field key_string clashes"},
		{"does not compile", gentest.Config{ImportPaths: []string{"testdata/proto"}, Files: []string{"nope.proto"}, Golden: t.TempDir()}, "nope.proto"},
		{"bad parameter", gentest.Config{ImportPaths: []string{"testdata/proto"}, Parameter: "features=", Golden: t.TempDir()}, "features is empty"},
		{"no import path", gentest.Config{Golden: t.TempDir()}, "ImportPaths is empty"},
	} {
		r := check(t, c.cfg)
		if !r.fatal || len(r.errs) != 1 || !strings.Contains(r.errs[0], c.want) {
			t.Errorf("%s: failures %q (fatal %v); want one fatal failure holding %q", c.name, r.errs, r.fatal, c.want)
		}
	}
}
