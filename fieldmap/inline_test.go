package fieldmap

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"testing"
)

// TestHotPathsInline checks that the calls every generated CopyInFields
// makes before its copy code, FieldMap.Bind and FieldMap.FirstWindow, stay
// within the compiler's inlining budget: a change that pushes one over it
// adds a function call to every copy, which no functional test sees. It
// asks the compiler of the running toolchain (go build -gcflags=-m=2) about
// this package.
func TestHotPathsInline(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the compiler")
	}
	out := compile(t, "-m=2", ".")
	for _, fn := range []string{"Bind", "FirstWindow"} {
		re := regexp.MustCompile(`can inline \(\*FieldMap\)\.` + fn + `\b`)
		if !re.Match(out) {
			t.Errorf("(*FieldMap).%s is not inlinable any more; the compiler says:\n%s", fn,
				regexp.MustCompile(`(?m)^.*cannot inline \(\*FieldMap\)\.`+fn+`\b.*$`).Find(out))
		}
	}
}

// TestEqualHelpersInline checks that the helpers generated Equal methods
// call for unknown fields and well-known types stay within the inlining
// budget, so that the Equal of a small message (a few scalar fields) is
// inlinable into its parent as vtprotobuf's EqualVT is: one direct call
// more, to a helper or a message's Equal, would put it over the budget.
func TestEqualHelpersInline(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the compiler")
	}
	out := compile(t, "-m=2", ".")
	for _, fn := range []string{"EqualUnknownFields", "EqualTimestamp", "EqualDuration", "EqualEmpty",
		"EqualInt64Value", "EqualUInt64Value", "EqualInt32Value", "EqualUInt32Value", "EqualBoolValue", "EqualStringValue"} {
		if !regexp.MustCompile(`can inline ` + fn + `\b`).Match(out) {
			t.Errorf("%s is not inlinable any more; the compiler says:\n%s", fn,
				regexp.MustCompile(`(?m)^.*cannot inline `+fn+`\b.*$`).Find(out))
		}
	}
}

// compile returns what go build -gcflags=<gcflags> of package pkg prints
// (with -m=2 the compiler's inlining decisions and costs, with -S its
// assembly), built by the go command of the toolchain running the test.
func compile(t *testing.T, gcflags, pkg string) []byte {
	t.Helper()
	goBin := filepath.Join(runtime.GOROOT(), "bin", "go")
	out, err := exec.Command(goBin, "build", "-gcflags="+gcflags, "-o", os.DevNull, pkg).CombinedOutput()
	if err != nil {
		t.Fatalf("go build -gcflags=%s %s: %v\n%s", gcflags, pkg, err, out)
	}
	return out
}

// TestCloneUnknownOutOfLine checks the split generated Clone methods rely
// on for unknown fields: CloneUnknownFields stays inlinable (so that the
// Clone of a small message stays within its budget, as with Equal's
// EqualUnknownFields) and the copy itself, CloneUnknown, is never inlined,
// so that it is compiled once and not into every Clone and its parents.
func TestCloneUnknownOutOfLine(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the compiler")
	}
	out := compile(t, "-m=2", ".")
	if !regexp.MustCompile(`can inline CloneUnknownFields\b`).Match(out) {
		t.Errorf("CloneUnknownFields is not inlinable; the compiler says:\n%s",
			regexp.MustCompile(`(?m)^.*cannot inline CloneUnknownFields\b.*$`).Find(out))
	}
	if m := regexp.MustCompile(`(?m)^.*can inline CloneUnknown\b.*$`).Find(out); m != nil {
		t.Errorf("CloneUnknown is inlinable, so compiled into every caller:\n%s", m)
	}
	if !regexp.MustCompile(`cannot inline CloneUnknown: marked go:noinline`).Match(out) {
		t.Errorf("CloneUnknown: the compiler does not say it is marked go:noinline")
	}
}
