package testpb_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"testing"
)

// TestSmallEqualInlines checks that the generated Equal of small messages
// (a few scalar fields, or none) is inlinable into its parents, as
// vtprotobuf's EqualVT is: the unknown fields are compared through
// fieldmap.EqualUnknownFields, whose out-of-line part the inliner charges
// as a call through a parameter. A generator change that adds a direct
// call to every Equal (as the comparison of unknown fields used to be)
// makes this fail; no functional test would see it.
func TestSmallEqualInlines(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the compiler")
	}
	goBin := filepath.Join(runtime.GOROOT(), "bin", "go")
	out, err := exec.Command(goBin, "build", "-gcflags=-m=2", "-o", os.DevNull, ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go build -gcflags=-m=2: %v\n%s", err, out)
	}
	// Empty has no field, NamedKey two strings, SubKey a string, an int64
	// and a bool.
	for _, msg := range []string{"Empty", "NamedKey", "SubKey"} {
		if !regexp.MustCompile(`can inline \(\*` + msg + `\)\.Equal\b`).Match(out) {
			t.Errorf("(*%s).Equal is not inlinable; the compiler says:\n%s", msg,
				regexp.MustCompile(`(?m)^.*cannot inline \(\*`+msg+`\)\.Equal\b.*$`).Find(out))
		}
	}
}
