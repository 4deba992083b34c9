package randmsg

import (
	"math/rand/v2"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// Fill sets a random subset of the fields of m (fields it does not pick are
// left as they are) and returns nothing: the same r state, options and
// message type always give the same content. A nil or invalid (read-only)
// m is left alone.
func Fill(m protoreflect.Message, r *rand.Rand, opts Options) {
	if m == nil || !m.IsValid() {
		return
	}
	f := filler{r: r, opts: opts}
	f.message(m, 0)
}

// filler carries one Fill (or Mutate) call.
type filler struct {
	r    *rand.Rand
	opts Options
}

// message fills m, which sits depth levels below the filled message.
func (f filler) message(m protoreflect.Message, depth int) {
	if f.wellKnown(m, depth) {
		return
	}
	md := m.Descriptor()
	oneofs := md.Oneofs()
	for i := 0; i < oneofs.Len(); i++ {
		od := oneofs.Get(i)
		if od.IsSynthetic() {
			continue // proto3 optional: a field like any other
		}
		if k := f.r.IntN(od.Fields().Len() + 1); k < od.Fields().Len() {
			f.field(m, od.Fields().Get(k), depth)
		}
	}
	fields := md.Fields()
	for i := 0; i < fields.Len(); i++ {
		fd := fields.Get(i)
		if od := fd.ContainingOneof(); od != nil && !od.IsSynthetic() {
			continue
		}
		if f.r.IntN(3) > 0 {
			f.field(m, fd, depth)
		}
	}
	if f.opts.Unknown && f.r.IntN(4) == 0 {
		f.unknown(m)
	}
}

// field sets fd in m to a new random value. Message-typed fields below the
// depth limit stay unset.
func (f filler) field(m protoreflect.Message, fd protoreflect.FieldDescriptor, depth int) {
	msgValued := fd.Message() != nil && (!fd.IsMap() || fd.MapValue().Message() != nil)
	if msgValued && depth >= f.opts.maxDepth() {
		return
	}
	switch {
	case fd.IsList():
		n := f.length()
		if n == 0 {
			m.Clear(fd)
			return
		}
		l := m.NewField(fd).List()
		for i := 0; i < n; i++ {
			l.Append(f.element(fd, l.NewElement, depth))
		}
		m.Set(fd, protoreflect.ValueOfList(l))
	case fd.IsMap():
		n := f.length()
		if n == 0 {
			m.Clear(fd)
			return
		}
		mp := m.NewField(fd).Map()
		for i := 0; i < n; i++ {
			mp.Set(f.scalar(fd.MapKey()).MapKey(), f.element(fd.MapValue(), mp.NewValue, depth))
		}
		m.Set(fd, protoreflect.ValueOfMap(mp))
	default:
		m.Set(fd, f.element(fd, func() protoreflect.Value { return m.NewField(fd) }, depth))
	}
}

// element returns one random value of (an element of) fd; newMsg makes an
// empty message value of the right type.
func (f filler) element(fd protoreflect.FieldDescriptor, newMsg func() protoreflect.Value, depth int) protoreflect.Value {
	if fd.Message() == nil {
		return f.scalar(fd)
	}
	v := newMsg()
	f.message(v.Message(), depth+1)
	return v
}

// length draws a list or map length: often 0 or 1, up to MaxLen.
func (f filler) length() int {
	if f.r.IntN(4) == 0 {
		return 0
	}
	return 1 + f.r.IntN(f.opts.maxLen())
}

// unknown appends one unknown field to m, with a number m does not define
// and no extension range covers.
func (f filler) unknown(m protoreflect.Message) {
	md := m.Descriptor()
	var num protowire.Number
	for range 16 {
		num = protowire.Number(1 + f.r.IntN(100000))
		if num >= protowire.FirstReservedNumber && num <= protowire.LastReservedNumber {
			continue
		}
		if md.Fields().ByNumber(num) == nil && !md.ExtensionRanges().Has(num) && !md.ReservedRanges().Has(num) {
			break
		}
		num = 0
	}
	if num == 0 {
		return
	}
	b := m.GetUnknown()
	switch f.r.IntN(4) {
	case 0:
		b = protowire.AppendTag(b, num, protowire.VarintType)
		b = protowire.AppendVarint(b, f.r.Uint64())
	case 1:
		b = protowire.AppendTag(b, num, protowire.Fixed32Type)
		b = protowire.AppendFixed32(b, f.r.Uint32())
	case 2:
		b = protowire.AppendTag(b, num, protowire.Fixed64Type)
		b = protowire.AppendFixed64(b, f.r.Uint64())
	default:
		b = protowire.AppendTag(b, num, protowire.BytesType)
		b = protowire.AppendBytes(b, []byte(f.str()))
	}
	m.SetUnknown(b)
}
