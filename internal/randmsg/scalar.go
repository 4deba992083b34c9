package randmsg

import (
	"math"
	"strings"

	"google.golang.org/protobuf/reflect/protoreflect"
)

// scalar returns a random value of the scalar (or enum) field fd.
func (f filler) scalar(fd protoreflect.FieldDescriptor) protoreflect.Value {
	r := f.r
	switch fd.Kind() {
	case protoreflect.BoolKind:
		return protoreflect.ValueOfBool(r.IntN(2) == 1)
	case protoreflect.EnumKind:
		return protoreflect.ValueOfEnum(f.enum(fd.Enum()))
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind:
		return protoreflect.ValueOfInt32(pick(f, []int32{0, 1, -1, math.MinInt32, math.MaxInt32}, func() int32 { return int32(r.Uint32()) }))
	case protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
		return protoreflect.ValueOfInt64(pick(f, []int64{0, 1, -1, math.MinInt64, math.MaxInt64}, func() int64 { return int64(r.Uint64()) }))
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind:
		return protoreflect.ValueOfUint32(pick(f, []uint32{0, 1, math.MaxUint32}, r.Uint32))
	case protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		return protoreflect.ValueOfUint64(pick(f, []uint64{0, 1, math.MaxUint64}, r.Uint64))
	case protoreflect.FloatKind:
		return protoreflect.ValueOfFloat32(float32(f.float()))
	case protoreflect.DoubleKind:
		return protoreflect.ValueOfFloat64(f.float())
	case protoreflect.StringKind:
		return protoreflect.ValueOfString(f.str())
	case protoreflect.BytesKind:
		return protoreflect.ValueOfBytes(f.bytes())
	}
	return fd.Default() // message kinds never get here
}

// pick returns one of the interesting values half of the time, else a
// random one.
func pick[T any](f filler, interesting []T, random func() T) T {
	if f.r.IntN(2) == 0 {
		return interesting[f.r.IntN(len(interesting))]
	}
	return random()
}

// float returns a float with NaN, infinities, -0 and tiny or huge values
// among the outcomes.
func (f filler) float() float64 {
	switch f.r.IntN(12) {
	case 0:
		return math.NaN()
	case 1:
		return math.Inf(1)
	case 2:
		return math.Inf(-1)
	case 3:
		return math.Copysign(0, -1)
	case 4:
		return 0
	case 5:
		return math.SmallestNonzeroFloat32
	case 6:
		return -math.MaxFloat32
	}
	return (f.r.Float64() - 0.5) * math.Pow(10, float64(f.r.IntN(20)-5))
}

// runes to draw strings from: ASCII, Latin-1, CJK, an emoji (4 bytes in
// UTF-8), a combining mark and the largest code point.
var runes = []rune("aZ09 _-./:é߷ß世界😀\u0301\U0010FFFF\t")

// str returns a valid UTF-8 string of 0..8 runes.
func (f filler) str() string {
	n := f.r.IntN(9)
	var b strings.Builder
	for range n {
		if f.r.IntN(4) == 0 {
			b.WriteRune(f.anyRune())
		} else {
			b.WriteRune(runes[f.r.IntN(len(runes))])
		}
	}
	return b.String()
}

// anyRune returns a random valid Unicode scalar value (no surrogates).
func (f filler) anyRune() rune {
	for {
		c := rune(f.r.IntN(0x110000))
		if c < 0xD800 || c > 0xDFFF {
			return c
		}
	}
}

// bytes returns nil, an empty non-nil slice, or 1..8 random bytes.
func (f filler) bytes() []byte {
	switch f.r.IntN(4) {
	case 0:
		return nil
	case 1:
		return []byte{}
	}
	b := make([]byte, 1+f.r.IntN(8))
	for i := range b {
		b[i] = byte(f.r.Uint32())
	}
	return b
}

// enum returns a value of ed: every defined value, and occasionally an
// undefined number when ed is open and Options.UndefinedEnums is set.
func (f filler) enum(ed protoreflect.EnumDescriptor) protoreflect.EnumNumber {
	vals := ed.Values()
	if f.opts.UndefinedEnums && !ed.IsClosed() && f.r.IntN(8) == 0 {
		for range 8 {
			n := protoreflect.EnumNumber(pick(f, []int32{-1, 1000, math.MaxInt32, math.MinInt32}, func() int32 { return int32(f.r.Uint32()) }))
			if vals.ByNumber(n) == nil {
				return n
			}
		}
	}
	return vals.Get(f.r.IntN(vals.Len())).Number()
}
