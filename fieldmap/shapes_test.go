package fieldmap

import (
	"regexp"
	"testing"
)

// TestMessageHelpersShareOneShape checks that the helpers generated
// CopyInFields calls for messages (CopyMessage, CopyMessageList,
// CopyMessageMap) are compiled once for every message type of a package,
// not once per type: the compiler compiles a generic function once per
// shape of its type arguments, and a message's struct type (a type
// parameter *E with E any, or a pointer under a constraint that lists
// types or comparable) is a shape of its own, which made a generated
// package compile each helper, and everything it calls, once per message
// type it holds lists or maps of. It compiles testdata/shapes, which calls
// the helpers with three message types, and reads the instances the
// compiler emits (go build -gcflags=-S).
func TestMessageHelpersShareOneShape(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the compiler")
	}
	out := compile(t, "-S", "./testdata/shapes")
	// A compiled generic body is named by its shapes, e.g.
	// fieldmap.CopyMessageList[go.shape.*uint8]; the per-type wrappers
	// that pass the dictionary name the type itself.
	shaped := regexp.MustCompile(`(?m)^github\.com/edgekit/edgekit/fieldmap\.(\w+)\[(go\.shape\.[^\n]*)\] STEXT`)
	bodies := map[string][]string{}
	for _, m := range shaped.FindAllSubmatch(out, -1) {
		bodies[string(m[1])] = append(bodies[string(m[1])], string(m[2]))
	}
	for _, fn := range []string{"CopyMessage", "CopyMessageList", "CopyMessageMap", "equalMessageList", "equalMessageMap"} {
		if got := bodies[fn]; len(got) != 1 {
			t.Errorf("%s is compiled %d times for three message types, want once; its shapes: %q", fn, len(got), got)
		}
	}
}
