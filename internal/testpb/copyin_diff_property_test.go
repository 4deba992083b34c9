package testpb_test

import (
	"math/rand/v2"
	"slices"
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/edgekit/edgekit/fieldmap"
	"github.com/edgekit/edgekit/internal/randmsg"
	"github.com/edgekit/edgekit/internal/reference"
)

func newPair(f flagged, r *rand.Rand, opts randmsg.Options) (a, b protoreflect.Message) {
	a = f.mt.New()
	randmsg.Fill(a, r, opts)
	if r.IntN(2) == 0 {
		b = snapshot(a.Interface()).ProtoReflect()
		randmsg.Mutate(b, r)
	} else {
		b = f.mt.New()
		randmsg.Fill(b, r, opts)
	}
	return a, b
}

// checkCopyAgainstReference copies src into dst with fm, and into clones of
// both with the reference, and compares the results and the counts.
func checkCopyAgainstReference(t testing.TB, f flagged, dst, src protoreflect.Message, fm *fieldmap.FieldMap) {
	t.Helper()
	refDst, refSrc := snapshot(dst.Interface()), snapshot(src.Interface())
	before := snapshot(dst.Interface())
	want := reference.CopyInFields(refDst.ProtoReflect(), refSrc.ProtoReflect(), fm)
	got := f.CopyInFields(dst.Interface(), src.Interface(), fm)
	if !proto.Equal(dst.Interface(), refDst) {
		t.Fatalf("%s: fm %v\ndst    %v\nsrc    %v\ngot    %v\nwant   %v", f.mt.Descriptor().FullName(), fm, before, src.Interface(), dst.Interface(), refDst)
	}
	if got != want {
		t.Fatalf("%s: fm %v: count %d, reference %d\ndst %v\nsrc %v", f.mt.Descriptor().FullName(), fm, got, want, before, src.Interface())
	}
	if !proto.Equal(src.Interface(), refSrc) {
		t.Fatalf("%s: src changed", f.mt.Descriptor().FullName())
	}
}

// checkDiff compares DiffFields with the reference and checks the
// invariant: copying the diff makes a equal to b, and leaves no diff.
func checkDiff(t testing.TB, f flagged, a, b protoreflect.Message) {
	t.Helper()
	name := f.mt.Descriptor().FullName()
	got := f.DiffFields(a.Interface(), b.Interface())
	want := reference.DiffFields(a, b)
	if !slices.Equal(got.Fields(), want.Fields()) {
		t.Fatalf("%s: DiffFields = %v, reference %v\na %v\nb %v", name, got, want, a, b)
	}
	n := f.CopyInFields(a.Interface(), b.Interface(), got)
	if !proto.Equal(a.Interface(), b.Interface()) {
		t.Fatalf("%s: after copying the diff %v, not equal:\na %v\nb %v", name, got, a, b)
	}
	if (n == 0) != (got.Count() == 0) {
		t.Fatalf("%s: diff %v but copy counted %d", name, got, n)
	}
	if again := f.DiffFields(a.Interface(), b.Interface()); again.Count() != 0 {
		t.Fatalf("%s: second diff %v", name, again)
	}
}

func TestCopyInFieldsMatchesReference(t *testing.T) {
	for _, f := range flaggedTypes(t) {
		t.Run(string(f.mt.Descriptor().FullName()), func(t *testing.T) {
			t.Parallel()
			r := randmsg.New(1)
			schema := reference.NewSchema(f.mt.Descriptor())
			for range 200 {
				dst, src := newPair(f, r, randmsg.Options{Unknown: r.IntN(4) == 0})
				checkCopyAgainstReference(t, f, dst, src, randmsg.FieldMap(schema, r, true))
			}
			// nil src
			dst := f.mt.New()
			randmsg.Fill(dst, r, randmsg.Options{})
			refDst := snapshot(dst.Interface())
			all := schema.All()
			if got, want := f.CopyInFields(dst.Interface(), nil, all), reference.CopyInFields(refDst.ProtoReflect(), nil, all); got != want || !proto.Equal(dst.Interface(), refDst) {
				t.Fatalf("nil src: count %d, reference %d; dst %v, reference %v", got, want, dst, refDst)
			}
		})
	}
}

func TestDiffFieldsMatchesReference(t *testing.T) {
	for _, f := range flaggedTypes(t) {
		t.Run(string(f.mt.Descriptor().FullName()), func(t *testing.T) {
			t.Parallel()
			r := randmsg.New(2)
			for range 200 {
				a, b := newPair(f, r, randmsg.Options{})
				checkDiff(t, f, a, b)
			}
			// nil on either side reads as empty.
			b := f.mt.New()
			randmsg.Fill(b, r, randmsg.Options{})
			want := reference.DiffFields(f.mt.Zero(), b).Fields()
			if got := f.DiffFields(nil, b.Interface()).Fields(); !slices.Equal(got, want) {
				t.Fatalf("nil a: %v, reference %v", got, want)
			}
			if got := f.DiffFields(b.Interface(), nil).Fields(); !slices.Equal(got, want) {
				t.Fatalf("nil b: %v, reference %v", got, want)
			}
		})
	}
}

// fuzzTarget picks the message type and the messages of one fuzz input.
func fuzzTarget(t *testing.T, types []flagged, data []byte) (flagged, *rand.Rand) {
	r := randmsg.FromBytes(data)
	return types[r.IntN(len(types))], r
}

func FuzzCopyInFields(f *testing.F) {
	for _, s := range []string{"", "top", "legacy", "tree", "\x00\x01\x02", "modern edition"} {
		f.Add([]byte(s))
	}
	types := flaggedTypes(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		ft, r := fuzzTarget(t, types, data)
		dst, src := newPair(ft, r, randmsg.Options{Unknown: r.IntN(4) == 0, UndefinedEnums: true})
		checkCopyAgainstReference(t, ft, dst, src, randmsg.FieldMap(reference.NewSchema(ft.mt.Descriptor()), r, true))
	})
}

func FuzzDiffFields(f *testing.F) {
	for _, s := range []string{"", "top", "legacy", "tree", "\x00\x01\x02", "modern edition"} {
		f.Add([]byte(s))
	}
	types := flaggedTypes(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		ft, r := fuzzTarget(t, types, data)
		a, b := newPair(ft, r, randmsg.Options{UndefinedEnums: true})
		checkDiff(t, ft, a, b)
	})
}
