package testpb_test

import (
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/edgekit/edgekit/fieldmap"
	"github.com/edgekit/edgekit/internal/reference"
	"github.com/edgekit/edgekit/internal/testpb"
	otherpb "github.com/edgekit/edgekit/internal/testpb/other"
)

// handCopyAll is a hand-written copy of the fields that every leaf flag of
// Top selects, written the way one would without generated code: the
// allocation baseline for CopyInFields with all fields.
func handCopyAll(dst, src *testpb.Top) {
	dst.Key = src.Key.Clone()
	dst.Middle = src.Middle.Clone()
	dst.Tags = append([]string(nil), src.Tags...)
	dst.Middles = make([]*testpb.Middle, len(src.Middles))
	for i, m := range src.Middles {
		dst.Middles[i] = m.Clone()
	}
	dst.Labels = make(map[string]string, len(src.Labels))
	for k, v := range src.Labels {
		dst.Labels[k] = v
	}
	dst.LeafMap = make(map[int32]*testpb.Leaf, len(src.LeafMap))
	for k, v := range src.LeafMap {
		dst.LeafMap[k] = v.Clone()
	}
	dst.Blobs = make([][]byte, len(src.Blobs))
	for i, b := range src.Blobs {
		dst.Blobs[i] = append([]byte(nil), b...)
	}
	dst.Samples = append([]float64(nil), src.Samples...)
	dst.States = append([]testpb.State(nil), src.States...)
	dst.BlobMap = make(map[string][]byte, len(src.BlobMap))
	for k, v := range src.BlobMap {
		dst.BlobMap[k] = append([]byte(nil), v...)
	}
	dst.StateMap = make(map[bool]testpb.State, len(src.StateMap))
	for k, v := range src.StateMap {
		dst.StateMap[k] = v
	}
	if c, ok := src.Choice.(*testpb.Top_ChoiceLeaf); ok {
		dst.Choice = &testpb.Top_ChoiceLeaf{ChoiceLeaf: c.ChoiceLeaf.Clone()}
	}
	dst.Scalars = src.Scalars.Clone()
	dst.Optionals = src.Optionals.Clone()
	dst.Wkt = src.Wkt.Clone()
	dst.Label = src.Label.Clone()
	dst.LabelsOther = make([]*otherpb.Label, len(src.LabelsOther))
	for i, l := range src.LabelsOther {
		dst.LabelsOther[i] = l.Clone()
	}
	dst.Password = src.Password
	dst.AtomicLeaf = src.AtomicLeaf.Clone()
	dst.LabelMap = make(map[string]*otherpb.Label, len(src.LabelMap))
	for k, v := range src.LabelMap {
		dst.LabelMap[k] = v.Clone()
	}
	dst.Empty = src.Empty.Clone()
}

// handCopyFew is the hand-written copy of the few nested flags of
// benchFewFlags.
func handCopyFew(dst, src *testpb.Top) {
	if dst.Middle == nil {
		dst.Middle = &testpb.Middle{}
	}
	if dst.Middle.Leaf == nil {
		dst.Middle.Leaf = &testpb.Leaf{}
	}
	dst.Middle.Leaf.Name = src.GetMiddle().GetLeaf().GetName()
	if dst.Key == nil {
		dst.Key = &testpb.Key{}
	}
	if dst.Key.Sub == nil {
		dst.Key.Sub = &testpb.SubKey{}
	}
	dst.Key.Sub.Zone = src.GetKey().GetSub().GetZone()
	dst.Tags = append([]string(nil), src.Tags...)
	if dst.Scalars == nil {
		dst.Scalars = &testpb.Scalars{}
	}
	dst.Scalars.FString = src.GetScalars().GetFString()
}

// benchFewFlags are a few nested flags of Top.
var benchFewFlags = []string{
	testpb.TopFieldMiddleLeafName,
	testpb.TopFieldKeySubZone,
	testpb.TopFieldTags,
	testpb.TopFieldScalarsFString,
}

func BenchmarkCopyInFields(b *testing.B) {
	src := topFixture()
	cases := []struct {
		name string
		fm   *fieldmap.FieldMap
		hand func(dst, src *testpb.Top)
	}{
		{"all", fmOf(testpb.TopAllFields...), handCopyAll},
		{"few", fmOf(benchFewFlags...), handCopyFew},
	}
	for _, c := range cases {
		b.Run("case="+c.name+"/impl=generated", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				dst := &testpb.Top{}
				dst.CopyInFields(src, c.fm)
			}
		})
		b.Run("case="+c.name+"/impl=reference", func(b *testing.B) {
			b.ReportAllocs()
			s := src.ProtoReflect()
			for b.Loop() {
				dst := &testpb.Top{}
				reference.CopyInFields(dst.ProtoReflect(), s, c.fm)
			}
		})
		b.Run("case="+c.name+"/impl=proto.Merge-into-fresh", func(b *testing.B) {
			// Merge copies the whole message whatever the flags: the cost
			// of not selecting fields.
			b.ReportAllocs()
			for b.Loop() {
				dst := &testpb.Top{}
				proto.Merge(dst, src)
			}
		})
		b.Run("case="+c.name+"/impl=handwritten", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				dst := &testpb.Top{}
				c.hand(dst, src)
			}
		})
	}
	// Copying into an equal destination: only comparisons, no allocation.
	b.Run("case=all-unchanged/impl=generated", func(b *testing.B) {
		b.ReportAllocs()
		dst, fm := topFixture(), fmOf(testpb.TopAllFields...)
		for b.Loop() {
			if dst.CopyInFields(src, fm) != 0 {
				b.Fatal("changed")
			}
		}
	})
}

func BenchmarkDiffFields(b *testing.B) {
	x, y := topFixture(), topFixture()
	y.Middle.Leaf.Name = "other"
	y.Tags = append(y.Tags, "e")
	y.Scalars.FInt64++
	b.Run("impl=generated", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			x.DiffFields(y)
		}
	})
	b.Run("impl=reference", func(b *testing.B) {
		b.ReportAllocs()
		rx, ry := x.ProtoReflect(), y.ProtoReflect()
		for b.Loop() {
			reference.DiffFields(rx, ry)
		}
	})
}

func BenchmarkHas(b *testing.B) {
	fm := fmOf(testpb.TopFieldMiddle, testpb.TopFieldKeySubZone, testpb.TopFieldTags)
	b.ReportAllocs()
	for b.Loop() {
		if !fm.Has(testpb.TopFieldMiddleLeafName) || fm.Has(testpb.TopFieldKeySubRegion) {
			b.Fatal("wrong answer")
		}
	}
}
