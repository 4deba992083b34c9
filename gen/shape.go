package gen

import (
	"hash/fnv"
	"slices"
	"strconv"
	"strings"

	"google.golang.org/protobuf/compiler/protogen"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/edgekit/edgekit/fieldmap"
)

// Shape is the layout of the fields of one message type at one place of a
// flag tree. Flags are numbered depth first, so the flags of a shape's
// fields, and the flags below them, are consecutive: Off numbers each field
// from the shape's first flag. A message type has one shape wherever it
// appears, except inside a cycle of message types, where the types already
// on the path stop the recursion: each distinct set of such types is a
// variant. The copy and diff code of a shape is emitted once and called by
// its parents with the number of its first flag.
type Shape struct {
	Message *protogen.Message
	Fields  []*ShapeField
	// Size is how many flags the fields have, with those below them
	// (saturated at MaxFlags+1).
	Size int
	// Variant is "" for the layout the message has as a top-level message,
	// else a short name for its set of stopping types.
	Variant string
}

// ShapeField is one field of a shape.
type ShapeField struct {
	Field *protogen.Field
	Kind  fieldmap.Kind
	Off   int    // number of the field's flag, from the shape's first flag
	Sub   *Shape // the layout below a message field with flags below it
}

// maxShapes bounds the shapes analysis builds: types referring to each
// other in a dense cycle have exponentially many variants, and long before
// that too many flags.
const maxShapes = 50000

// shapes memoises shapes by message and stopping types.
type shapes struct {
	byKey map[string]*Shape
	reach map[protoreflect.FullName]map[protoreflect.FullName]bool
	over  bool // maxShapes was reached
}

func newShapes() *shapes {
	return &shapes{byKey: map[string]*Shape{}, reach: map[protoreflect.FullName]map[protoreflect.FullName]bool{}}
}

// expands reports whether flags are generated below message field f for
// reasons other than recursion: not a well-known type, an open struct, not
// atomic.
func expands(f *protogen.Field) bool {
	return IsMessage(f) && !IsWellKnown(f.Message) && IsOpen(f.Message) && !IsAtomic(f)
}

// reachable returns the message types reachable from msg through fields
// that expand (msg itself only through a cycle).
func (ss *shapes) reachable(msg *protogen.Message) map[protoreflect.FullName]bool {
	if r, ok := ss.reach[msg.Desc.FullName()]; ok {
		return r
	}
	r := map[protoreflect.FullName]bool{}
	var walk func(m *protogen.Message)
	walk = func(m *protogen.Message) {
		for _, f := range m.Fields {
			if expands(f) && !r[f.Message.Desc.FullName()] {
				r[f.Message.Desc.FullName()] = true
				walk(f.Message)
			}
		}
	}
	walk(msg)
	ss.reach[msg.Desc.FullName()] = r
	return r
}

// top returns the shape msg has as a top-level message.
func (ss *shapes) top(msg *protogen.Message) *Shape {
	return ss.of(msg, []protoreflect.FullName{msg.Desc.FullName()})
}

// of returns the shape of msg below the message types onPath (msg
// included).
func (ss *shapes) of(msg *protogen.Message, onPath []protoreflect.FullName) *Shape {
	reach := ss.reachable(msg)
	var stops []string
	for _, n := range onPath {
		if reach[n] {
			stops = append(stops, string(n))
		}
	}
	slices.Sort(stops)
	stops = slices.Compact(stops)
	key := string(msg.Desc.FullName()) + "|" + strings.Join(stops, ",")
	if s, ok := ss.byKey[key]; ok {
		return s
	}
	s := &Shape{Message: msg}
	if !(len(stops) == 0 || (len(stops) == 1 && stops[0] == string(msg.Desc.FullName()))) {
		h := fnv.New32a()
		h.Write([]byte(key))
		s.Variant = strconv.FormatUint(uint64(h.Sum32()), 36)
	}
	ss.byKey[key] = s
	if len(ss.byKey) > maxShapes {
		ss.over = true
		s.Size = MaxFlags + 1
		return s
	}
	for _, f := range sortedFields(msg) {
		sf := &ShapeField{Field: f, Kind: fieldmap.KindScalar, Off: s.Size}
		switch {
		case f.Desc.IsMap():
			sf.Kind = fieldmap.KindMap
		case f.Desc.IsList():
			sf.Kind = fieldmap.KindList
		}
		if expands(f) && !slices.Contains(onPath, f.Message.Desc.FullName()) {
			sub := ss.of(f.Message, append(slices.Clip(onPath), f.Message.Desc.FullName()))
			if sub.Size > 0 {
				sf.Sub = sub
				if sf.Kind == fieldmap.KindScalar {
					sf.Kind = fieldmap.KindMessage
				}
			}
		}
		s.Size = min(s.Size+1+subSize(sf.Sub), MaxFlags+1)
		s.Fields = append(s.Fields, sf)
	}
	return s
}

func subSize(s *Shape) int {
	if s == nil {
		return 0
	}
	return s.Size
}

// Walk calls fn for s and every shape below it, each once, parents first.
func (s *Shape) Walk(fn func(*Shape) bool) {
	seen := map[*Shape]bool{}
	var walk func(*Shape)
	walk = func(x *Shape) {
		if seen[x] {
			return
		}
		seen[x] = true
		if !fn(x) {
			return
		}
		for _, f := range x.Fields {
			if f.Sub != nil {
				walk(f.Sub)
			}
		}
	}
	walk(s)
}
