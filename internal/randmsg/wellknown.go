package randmsg

import (
	"math"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/emptypb"
	"google.golang.org/protobuf/types/known/timestamppb"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// Valid ranges of google.protobuf.Timestamp and Duration.
const (
	minTimestampSeconds = -62135596800 // 0001-01-01T00:00:00Z
	maxTimestampSeconds = 253402300799 // 9999-12-31T23:59:59Z
	maxDurationSeconds  = 315576000000 // 10000 years
)

// wellKnownNames are the messages wellKnown fills.
var wellKnownNames = map[protoreflect.FullName]bool{
	"google.protobuf.Timestamp": true,
	"google.protobuf.Duration":  true,
	"google.protobuf.Value":     true,
	"google.protobuf.Struct":    true,
	"google.protobuf.ListValue": true,
	"google.protobuf.Any":       true,
}

// wellKnown fills m when it is a well-known type that needs valid content
// (a Timestamp in range, a Value holding one kind, an Any holding a real
// message) and reports whether it did. Other google.protobuf messages are
// filled like any message. It works by field name, so it serves generated
// and dynamic messages alike.
func (f filler) wellKnown(m protoreflect.Message, depth int) bool {
	md := m.Descriptor()
	switch md.FullName() {
	case "google.protobuf.Timestamp":
		sec := minTimestampSeconds + f.r.Int64N(maxTimestampSeconds-minTimestampSeconds+1)
		if f.r.IntN(2) == 0 {
			sec = f.r.Int64N(2_000_000_000) // a plausible date
		}
		setNamed(m, "seconds", protoreflect.ValueOfInt64(sec))
		setNamed(m, "nanos", protoreflect.ValueOfInt32(f.r.Int32N(1_000_000_000)))
	case "google.protobuf.Duration":
		sec := f.r.Int64N(2*maxDurationSeconds+1) - maxDurationSeconds
		if f.r.IntN(2) == 0 {
			sec = f.r.Int64N(7200) - 3600
		}
		nanos := f.r.Int32N(1_000_000_000)
		if sec < 0 || (sec == 0 && f.r.IntN(2) == 0) {
			nanos = -nanos // nanos carries the sign of seconds
		}
		setNamed(m, "seconds", protoreflect.ValueOfInt64(sec))
		setNamed(m, "nanos", protoreflect.ValueOfInt32(nanos))
	case "google.protobuf.Value":
		f.value(m, depth)
	case "google.protobuf.Struct":
		fd := md.Fields().ByName("fields")
		if depth >= f.opts.maxDepth() {
			return true
		}
		if n := f.length(); n > 0 {
			mp := m.Mutable(fd).Map()
			for range n {
				v := mp.NewValue()
				f.value(v.Message(), depth+1)
				mp.Set(protoreflect.ValueOfString(f.str()).MapKey(), v)
			}
		}
	case "google.protobuf.ListValue":
		fd := md.Fields().ByName("values")
		if depth >= f.opts.maxDepth() {
			return true
		}
		if n := f.length(); n > 0 {
			l := m.Mutable(fd).List()
			for range n {
				v := l.NewElement()
				f.value(v.Message(), depth+1)
				l.Append(v)
			}
		}
	case "google.protobuf.Any":
		f.any(m)
	default:
		return false
	}
	return true
}

// value fills a google.protobuf.Value with one kind chosen at random.
func (f filler) value(m protoreflect.Message, depth int) {
	fields := m.Descriptor().Fields()
	kinds := []protoreflect.Name{"null_value", "number_value", "string_value", "bool_value", "struct_value", "list_value"}
	if depth >= f.opts.maxDepth() {
		kinds = kinds[:4]
	}
	fd := fields.ByName(kinds[f.r.IntN(len(kinds))])
	if fd == nil {
		return
	}
	switch fd.Name() {
	case "null_value":
		m.Set(fd, protoreflect.ValueOfEnum(0))
	case "number_value":
		x := f.float()
		if math.IsNaN(x) || math.IsInf(x, 0) {
			x = 0 // JSON has no such numbers
		}
		m.Set(fd, protoreflect.ValueOfFloat64(x))
	case "string_value":
		m.Set(fd, protoreflect.ValueOfString(f.str()))
	case "bool_value":
		m.Set(fd, protoreflect.ValueOfBool(f.r.IntN(2) == 0))
	default:
		v := m.NewField(fd)
		f.wellKnown(v.Message(), depth+1)
		m.Set(fd, v)
	}
}

// any fills a google.protobuf.Any with a random well-known message,
// serialised deterministically.
func (f filler) any(m protoreflect.Message) {
	var inner proto.Message
	switch f.r.IntN(5) {
	case 0:
		inner = &emptypb.Empty{}
	case 1:
		inner = wrapperspb.String(f.str())
	case 2:
		inner = wrapperspb.Int64(int64(f.r.Uint64()))
	case 3:
		inner = &timestamppb.Timestamp{Seconds: f.r.Int64N(maxTimestampSeconds), Nanos: f.r.Int32N(1_000_000_000)}
	default:
		inner = &durationpb.Duration{Seconds: f.r.Int64N(3600)}
	}
	var a anypb.Any
	if err := anypb.MarshalFrom(&a, inner, proto.MarshalOptions{Deterministic: true}); err != nil {
		return
	}
	setNamed(m, "type_url", protoreflect.ValueOfString(a.TypeUrl))
	if len(a.Value) > 0 {
		setNamed(m, "value", protoreflect.ValueOfBytes(a.Value))
	}
}

// setNamed sets the field called name, when m has one.
func setNamed(m protoreflect.Message, name protoreflect.Name, v protoreflect.Value) {
	if fd := m.Descriptor().Fields().ByName(name); fd != nil {
		m.Set(fd, v)
	}
}
