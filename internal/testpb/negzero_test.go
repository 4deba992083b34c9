package testpb_test

import (
	"math"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/edgekit/edgekit/fieldmap"
	"github.com/edgekit/edgekit/internal/testpb"
	plainpb "github.com/edgekit/edgekit/internal/testpb/plain"
)

var negZero = math.Copysign(0, -1)

// negZeroHolder holds -0 in implicit-presence floats of a message with
// extension ranges (itself carrying extensions when withExt) and of a
// message generated without edgekit.
func negZeroHolder(withExt bool) *testpb.NegZeroHolder {
	ext := &testpb.Extendable{D: negZero, Name: proto.String("x")}
	if withExt {
		proto.SetExtension(ext, testpb.E_ExtD, negZero)
		proto.SetExtension(ext, testpb.E_ExtMsg, &testpb.Extendable{D: negZero})
	}
	return &testpb.NegZeroHolder{
		Ext:    ext,
		Plain:  &plainpb.Plain{D: negZero, F: float32(negZero)},
		Exts:   []*testpb.Extendable{{D: negZero}},
		Plains: []*plainpb.Plain{{D: negZero}},
	}
}

// TestNegativeZeroSurvivesClone: Clone (and fieldmap.Clone of a message
// without generated code) used to fall back to proto.Clone, which drops -0
// from implicit-presence floats, so the copy was not proto.Equal to the
// original.
func TestNegativeZeroSurvivesClone(t *testing.T) {
	h := negZeroHolder(true)
	if c := h.Clone(); !proto.Equal(c, h) || !c.Equal(h) || !h.Equal(c) {
		t.Fatalf("Clone lost -0:\n  %v\nof\n  %v", c, h)
	}
	if c := h.Ext.Clone(); !proto.Equal(c, h.Ext) {
		t.Fatalf("Clone of a message with extensions lost -0:\n  %v\nof\n  %v", c, h.Ext)
	}
	if c := fieldmap.Clone(h.Plain); !proto.Equal(c, h.Plain) || c == h.Plain {
		t.Fatalf("fieldmap.Clone lost -0 or shares: %v", c)
	}
	// Equal sees extensions.
	other := h.Clone()
	proto.SetExtension(other.Ext, testpb.E_ExtD, 1.0)
	if h.Equal(other) || proto.Equal(h, other) {
		t.Fatal("Equal ignores a differing extension")
	}
}

// TestNegativeZeroDiffInvariant: a.CopyInFields(b, a.DiffFields(b)) makes a
// equal to b, and a second DiffFields is empty, with -0 held in those
// messages (without extensions, which have no flags).
func TestNegativeZeroDiffInvariant(t *testing.T) {
	for _, a := range []*testpb.NegZeroHolder{
		{},
		{Ext: &testpb.Extendable{}, Plain: &plainpb.Plain{}},
		{Ext: &testpb.Extendable{D: 1}, Plain: &plainpb.Plain{D: 1}, Exts: []*testpb.Extendable{{}}},
	} {
		b := negZeroHolder(false)
		diff := a.DiffFields(b)
		a.CopyInFields(b, diff)
		if !proto.Equal(a, b) {
			t.Fatalf("after copying %v: %v, want %v", diff, a, b)
		}
		if again := a.DiffFields(b); again.Count() != 0 {
			t.Fatalf("second DiffFields after %v: %v", diff, again)
		}
	}
}
