package reference_test

import (
	"errors"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/edgekit/edgekit/fieldmap"
	"github.com/edgekit/edgekit/internal/randmsg"
	"github.com/edgekit/edgekit/internal/reference"
	"github.com/edgekit/edgekit/internal/reference/reftest"
)

// seeds is how many random cases each property test runs per message type.
func seeds() int {
	if testing.Short() {
		return 50
	}
	return 400
}

func messages(t testing.TB) []protoreflect.MessageDescriptor {
	t.Helper()
	mds, err := reftest.Messages()
	if err != nil {
		t.Fatal(err)
	}
	return mds
}

// pair returns two random messages of type md: independent, or the second
// a small mutation of the first.
func pair(md protoreflect.MessageDescriptor, r *rand.Rand) (a, b protoreflect.Message) {
	opts := randmsg.Options{UndefinedEnums: true}
	a = dynamicpb.NewMessage(md)
	randmsg.Fill(a, r, opts)
	if r.IntN(2) == 0 {
		b = clone(a)
		randmsg.Mutate(b, r)
	} else {
		b = dynamicpb.NewMessage(md)
		randmsg.Fill(b, r, opts)
	}
	return a, b
}

// checkCopyDiff checks every CopyInFields/DiffFields property on one random
// case drawn from r; it is shared by the property tests and the fuzz target.
func checkCopyDiff(t *testing.T, md protoreflect.MessageDescriptor, r *rand.Rand) {
	t.Helper()
	a, b := pair(md, r)
	aBefore, bBefore := clone(a), clone(b)

	// CopyInFields(a, b, DiffFields(a, b)) makes a equal to b.
	d := reference.DiffFields(a, b)
	if err := d.Schema().Check(d); err != nil {
		t.Fatalf("DiffFields gave an invalid map: %v", err)
	}
	if (d.Count() == 0) != proto.Equal(a.Interface(), b.Interface()) {
		t.Fatalf("DiffFields %v but proto.Equal %v\na={%s}\nb={%s}", d, proto.Equal(a.Interface(), b.Interface()), text(a), text(b))
	}
	a2 := clone(a)
	n := reference.CopyInFields(a2, b, d)
	if !proto.Equal(a2.Interface(), b.Interface()) {
		t.Fatalf("after CopyInFields(a, b, %v):\ngot  {%s}\nwant {%s}", d, text(a2), text(b))
	}
	if again := reference.DiffFields(a2, b); again.Count() != 0 {
		t.Fatalf("second DiffFields = %v", again)
	}
	checkCount(t, aBefore, a2, n, d)

	// A random field map: selected units end equal, others keep their
	// value, the count says whether anything changed.
	s := reference.NewSchema(md)
	m := randmsg.FieldMap(s, r, true)
	if err := s.Check(m); err != nil {
		t.Fatalf("randmsg.FieldMap gave an invalid map: %v", err)
	}
	a3 := clone(a)
	n = reference.CopyInFields(a3, b, m)
	checkCount(t, aBefore, a3, n, m)
	info := reference.Schema(md)
	actions := slices.ContainsFunc(info, func(f fieldmap.Field) bool { return f.ListActions })
	after := reference.DiffFields(a3, b)
	for _, g := range after.Fields() {
		f, _ := s.Lookup(g)
		unit := f.Kind == fieldmap.KindList || f.Kind == fieldmap.KindMap
		parent, _, _ := cutLast(g)
		if unit && actions && m.ListAction(g) != fieldmap.Replace && !(parent != "" && m.Has(parent)) {
			checkAction(t, md, m.ListAction(g), a3, b, g)
			continue
		}
		if m.Has(g) || unit && m.HasOrHasChild(g) {
			t.Fatalf("flag %s selected by %v still differs after the copy\ngot  {%s}\nsrc  {%s}", g, m, text(a3), text(b))
		}
	}
	for _, f := range info {
		if !f.Leaf || touched(md, m, f.Flag) {
			continue
		}
		if !sameAt(md, aBefore, a3, f.Flag) {
			t.Fatalf("flag %s not selected by %v but changed\nbefore {%s}\nafter  {%s}", f.Flag, m, text(aBefore), text(a3))
		}
	}

	// src is never changed, and dst shares nothing with it.
	if !proto.Equal(b.Interface(), bBefore.Interface()) {
		t.Fatalf("CopyInFields changed src")
	}
	snap := clone(a3)
	scribble(b)
	if !proto.Equal(a3.Interface(), snap.Interface()) {
		t.Fatalf("dst changed when src was scribbled over: dst shares memory with src (fm %v)", m)
	}
}

// checkAction checks the result of an add or remove list action on the
// list or map a flag names: after add every src element (entry) is in dst,
// after remove none is (no key of src is).
func checkAction(t *testing.T, md protoreflect.MessageDescriptor, act fieldmap.Action, dst, src protoreflect.Message, flag string) {
	t.Helper()
	fds := fieldsOf(md, flag)
	for _, fd := range fds[:len(fds)-1] {
		dst, src = dst.Get(fd).Message(), src.Get(fd).Message()
	}
	fd := fds[len(fds)-1]
	dv, sv := dst.Get(fd), src.Get(fd)
	if fd.IsMap() {
		sv.Map().Range(func(k protoreflect.MapKey, v protoreflect.Value) bool {
			if act == fieldmap.Add && (!dv.Map().Has(k) || !dv.Map().Get(k).Equal(v)) ||
				act == fieldmap.Remove && dv.Map().Has(k) {
				t.Fatalf("%s:%v: key %v wrong after the copy", flag, act, k)
			}
			return true
		})
		return
	}
	for i := 0; i < sv.List().Len(); i++ {
		in := false
		for j := 0; j < dv.List().Len(); j++ {
			in = in || dv.List().Get(j).Equal(sv.List().Get(i))
		}
		if in != (act == fieldmap.Add) {
			t.Fatalf("%s:%v: element %d of src in dst = %v", flag, act, i, in)
		}
	}
}

// cutLast splits a flag into its parent and last component.
func cutLast(flag string) (parent, last string, ok bool) {
	i := strings.LastIndexByte(flag, '.')
	if i < 0 {
		return "", flag, false
	}
	return flag[:i], flag[i+1:], true
}

// checkCount checks the count against the specification: a dst left bit
// for bit unchanged counts 0, and a count of 0 leaves dst Equal to what it
// was (changes only bits can tell, such as -0 in a list, may go uncounted).
func checkCount(t *testing.T, before, after protoreflect.Message, n int, m *fieldmap.FieldMap) {
	t.Helper()
	if bits(t, before) == bits(t, after) && n != 0 {
		t.Fatalf("CopyInFields(%v) counted %d, but dst is unchanged\nbefore {%s}", m, n, text(before))
	}
	if n == 0 && !proto.Equal(before.Interface(), after.Interface()) {
		t.Fatalf("CopyInFields(%v) counted 0, but dst changed\nbefore {%s}\nafter  {%s}", m, text(before), text(after))
	}
}

// touched reports whether CopyInFields with m may change the leaf flag:
// it or a field on its path is selected, or a field on its path is a oneof
// member whose oneof has another member selected.
func touched(md protoreflect.MessageDescriptor, m *fieldmap.FieldMap, flag string) bool {
	if m.HasOrHasChild(flag) {
		return true
	}
	prefix := ""
	for _, fd := range fieldsOf(md, flag) {
		if od := fd.ContainingOneof(); od != nil && !od.IsSynthetic() {
			for i := 0; i < od.Fields().Len(); i++ {
				if o := od.Fields().Get(i); o != fd && m.HasOrHasChild(prefix+itoa(o.Number())) {
					return true
				}
			}
		}
		prefix += itoa(fd.Number()) + "."
	}
	return false
}

// fieldsOf returns the fields a flag walks through from md.
func fieldsOf(md protoreflect.MessageDescriptor, flag string) []protoreflect.FieldDescriptor {
	var out []protoreflect.FieldDescriptor
	for _, part := range strings.Split(flag, ".") {
		fd := md.Fields().ByNumber(protoreflect.FieldNumber(atoi(part)))
		out = append(out, fd)
		md = fd.Message()
	}
	return out
}

// sameAt reports whether the field a flag names holds equal values (with
// equal presence) in a and b; an absent sub-message on the way reads as
// empty.
func sameAt(md protoreflect.MessageDescriptor, a, b protoreflect.Message, flag string) bool {
	fds := fieldsOf(md, flag)
	for _, fd := range fds[:len(fds)-1] {
		a, b = a.Get(fd).Message(), b.Get(fd).Message()
	}
	fd := fds[len(fds)-1]
	ha, hb := a.IsValid() && a.Has(fd), b.IsValid() && b.Has(fd)
	return ha == hb && (!ha || a.Get(fd).Equal(b.Get(fd)))
}

func itoa(n protoreflect.FieldNumber) string { return strconv.Itoa(int(n)) }

func atoi(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}

func TestPropertyCopyInDiff(t *testing.T) {
	for _, md := range messages(t) {
		t.Run(string(md.FullName()), func(t *testing.T) {
			t.Parallel()
			for seed := range seeds() {
				r := randmsg.New(uint64(seed))
				checkCopyDiff(t, md, r)
			}
		})
	}
}

// TestPropertyClonesAndEquals checks the oracle's Clone and Equal against
// the protobuf library on random messages.
func TestPropertyCloneEqual(t *testing.T) {
	for _, md := range messages(t) {
		for seed := range seeds() {
			a, b := pair(md, randmsg.New(uint64(seed)))
			c := reference.Clone(a.Interface())
			if !reference.Equal(c, a.Interface()) {
				t.Fatalf("%s: clone differs", md.FullName())
			}
			if reference.Equal(a.Interface(), b.Interface()) != proto.Equal(a.Interface(), b.Interface()) {
				t.Fatalf("%s: Equal disagrees with proto.Equal", md.FullName())
			}
		}
	}
}

// TestPropertyRedactValidate checks Redact and ValidateEnums on random
// messages against walks written for the test.
func TestPropertyRedactValidate(t *testing.T) {
	for _, md := range messages(t) {
		for seed := range seeds() {
			a, _ := pair(md, randmsg.New(uint64(seed)))
			err := reference.ValidateEnums(a)
			var ie *fieldmap.InvalidEnumError
			if (err != nil) != hasUndefinedEnum(a) || err != nil && !errors.As(err, &ie) {
				t.Fatalf("%s: ValidateEnums = %v for {%s}", md.FullName(), err, text(a))
			}
			if err != nil && ie.Message != string(md.FullName()) {
				t.Fatalf("error names message %q", ie.Message)
			}
			r := clone(a)
			reference.Redact(r)
			if hasRedacted(r) {
				t.Fatalf("%s: Redact left a sensitive field: {%s}", md.FullName(), text(r))
			}
			r2 := clone(r)
			reference.Redact(r2)
			if !proto.Equal(r.Interface(), r2.Interface()) {
				t.Fatalf("Redact is not idempotent")
			}
		}
	}
}

// walk calls f for every populated field of m and of the messages below it.
func walk(m protoreflect.Message, f func(protoreflect.FieldDescriptor, protoreflect.Value) bool) bool {
	found := false
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		vals := []protoreflect.Value{v}
		vfd := fd
		switch {
		case fd.IsList():
			vals = nil
			for i := 0; i < v.List().Len(); i++ {
				vals = append(vals, v.List().Get(i))
			}
		case fd.IsMap():
			vals, vfd = nil, fd.MapValue()
			v.Map().Range(func(_ protoreflect.MapKey, mv protoreflect.Value) bool {
				vals = append(vals, mv)
				return true
			})
		}
		if f(fd, v) {
			found = true
			return false
		}
		for _, x := range vals {
			if vfd.Message() != nil && walk(x.Message(), f) {
				found = true
				return false
			}
		}
		return true
	})
	return found
}

func hasUndefinedEnum(m protoreflect.Message) bool {
	return walk(m, func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		check := func(ed protoreflect.EnumDescriptor, n protoreflect.EnumNumber) bool {
			return ed.Values().ByNumber(n) == nil
		}
		switch {
		case fd.IsExtension():
			return false
		case fd.IsMap():
			bad := false
			if fd.MapValue().Enum() != nil {
				v.Map().Range(func(_ protoreflect.MapKey, x protoreflect.Value) bool {
					bad = check(fd.MapValue().Enum(), x.Enum())
					return !bad
				})
			}
			return bad
		case fd.Enum() == nil:
			return false
		case fd.IsList():
			for i := 0; i < v.List().Len(); i++ {
				if check(fd.Enum(), v.List().Get(i).Enum()) {
					return true
				}
			}
			return false
		}
		return check(fd.Enum(), v.Enum())
	})
}

func hasRedacted(m protoreflect.Message) bool {
	return walk(m, func(fd protoreflect.FieldDescriptor, _ protoreflect.Value) bool {
		return fieldmap.IsRedacted(fd)
	})
}

// TestConcurrentSchemas exercises the schema cache from many goroutines
// (run with -race).
func TestConcurrentSchemas(t *testing.T) {
	mds := messages(t)
	done := make(chan struct{})
	for g := range 8 {
		go func() {
			defer func() { done <- struct{}{} }()
			r := randmsg.New(uint64(g))
			for range 50 {
				md := mds[r.IntN(len(mds))]
				a, b := pair(md, r)
				reference.CopyInFields(a, b, reference.DiffFields(a, b))
			}
		}()
	}
	for range 8 {
		<-done
	}
}
