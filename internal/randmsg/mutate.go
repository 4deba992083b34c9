package randmsg

import (
	"math/rand/v2"

	"google.golang.org/protobuf/reflect/protoreflect"
)

// Mutate changes one to three random fields of m, possibly deep inside it
// (in a sub-message, a list element or a map value), so that m differs from
// its former self in a few places. A change may by chance give a field the
// value it had. It uses the default Options. A nil or invalid m is left
// alone.
func Mutate(m protoreflect.Message, r *rand.Rand) {
	if m == nil || !m.IsValid() {
		return
	}
	f := filler{r: r}
	for range 1 + r.IntN(3) {
		f.mutate(m, 0)
	}
}

// mutate changes one field of m, or of a message below it.
func (f filler) mutate(m protoreflect.Message, depth int) {
	if wellKnownNames[m.Descriptor().FullName()] {
		// Refill, so that the content stays valid for its type.
		m.Range(func(fd protoreflect.FieldDescriptor, _ protoreflect.Value) bool {
			m.Clear(fd)
			return true
		})
		f.wellKnown(m, depth)
		return
	}
	fields := m.Descriptor().Fields()
	if fields.Len() == 0 {
		return
	}
	fd := fields.Get(f.r.IntN(fields.Len()))
	descend := depth < f.opts.maxDepth() && m.Has(fd) && f.r.IntN(2) == 0
	switch {
	case descend && fd.IsMap() && fd.MapValue().Message() != nil:
		mp := m.Mutable(fd).Map()
		var keys []protoreflect.MapKey
		mp.Range(func(k protoreflect.MapKey, _ protoreflect.Value) bool {
			keys = append(keys, k)
			return true
		})
		// Map order is random: take the smallest key to stay deterministic.
		k := keys[0]
		for _, c := range keys[1:] {
			if less(c, k) {
				k = c
			}
		}
		f.mutate(mp.Mutable(k).Message(), depth+1)
	case descend && fd.IsList() && fd.Message() != nil:
		l := m.Mutable(fd).List()
		i := f.r.IntN(l.Len())
		e := l.Get(i) // a message element is a reference: mutated in place
		f.mutate(e.Message(), depth+1)
		l.Set(i, e)
	case descend && !fd.IsList() && !fd.IsMap() && fd.Message() != nil:
		f.mutate(m.Mutable(fd).Message(), depth+1)
	case f.r.IntN(4) == 0:
		m.Clear(fd)
	case fd.IsList() && m.Has(fd) && f.r.IntN(2) == 0 && (fd.Message() == nil || depth < f.opts.maxDepth()):
		l := m.Mutable(fd).List()
		l.Append(f.element(fd, l.NewElement, depth))
	default:
		f.field(m, fd, depth)
	}
}

// less orders map keys of one kind.
func less(a, b protoreflect.MapKey) bool {
	switch a.Interface().(type) {
	case bool:
		return !a.Bool() && b.Bool()
	case int32, int64:
		return a.Int() < b.Int()
	case uint32, uint64:
		return a.Uint() < b.Uint()
	}
	return a.String() < b.String()
}
