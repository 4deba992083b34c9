package fieldmap

import (
	"reflect"
	"sync"
	"sync/atomic"
	"unsafe"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/runtime/protoimpl"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/emptypb"
	"google.golang.org/protobuf/types/known/fieldmaskpb"
	"google.golang.org/protobuf/types/known/structpb"
	"google.golang.org/protobuf/types/known/timestamppb"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// The unknown fields of the well-known types are read and written in place,
// at the offset of their unknownFields field, instead of through
// ProtoReflect().GetUnknown, which costs more than comparing or copying a
// Timestamp itself. The offset is found by reflection on first use (the
// field's place differs between protobuf-go releases); a type without such a
// field falls back to the reflection API.

// unknownSlot is the place of one message type's unknown fields.
type unknownSlot struct {
	typ   func() reflect.Type // the message struct type
	once  sync.Once
	found atomic.Bool // set once off is known
	off   uintptr     // offset of the unknownFields field
}

// unknownFieldsType is the type of a generated message's unknown fields.
var unknownFieldsType = reflect.TypeFor[protoimpl.UnknownFields]()

// load locates the unknown fields of the slot's type, once, and reports
// whether the type has a field for them.
func (s *unknownSlot) load() bool {
	if s.found.Load() {
		return true
	}
	s.once.Do(func() {
		t := s.typ()
		for i := range t.NumField() {
			if f := t.Field(i); f.Name == "unknownFields" && f.Type == unknownFieldsType {
				s.off = f.Offset
				s.found.Store(true)
				return
			}
		}
	})
	return s.found.Load()
}

// at returns the unknown fields of the message at p; s must be loaded.
func (s *unknownSlot) at(p unsafe.Pointer) *[]byte {
	return (*[]byte)(unsafe.Add(p, s.off))
}

// message returns the message at p, for the reflection API.
func (s *unknownSlot) message(p unsafe.Pointer) protoreflect.Message {
	return reflect.NewAt(s.typ(), p).Interface().(proto.Message).ProtoReflect()
}

// One slot per well-known type with a direct helper. They are static data:
// nothing runs at init.
var (
	unknownTimestamp   = unknownSlot{typ: reflect.TypeFor[timestamppb.Timestamp]}
	unknownDuration    = unknownSlot{typ: reflect.TypeFor[durationpb.Duration]}
	unknownEmpty       = unknownSlot{typ: reflect.TypeFor[emptypb.Empty]}
	unknownFieldMask   = unknownSlot{typ: reflect.TypeFor[fieldmaskpb.FieldMask]}
	unknownAny         = unknownSlot{typ: reflect.TypeFor[anypb.Any]}
	unknownStruct      = unknownSlot{typ: reflect.TypeFor[structpb.Struct]}
	unknownListValue   = unknownSlot{typ: reflect.TypeFor[structpb.ListValue]}
	unknownValue       = unknownSlot{typ: reflect.TypeFor[structpb.Value]}
	unknownDoubleValue = unknownSlot{typ: reflect.TypeFor[wrapperspb.DoubleValue]}
	unknownFloatValue  = unknownSlot{typ: reflect.TypeFor[wrapperspb.FloatValue]}
	unknownInt64Value  = unknownSlot{typ: reflect.TypeFor[wrapperspb.Int64Value]}
	unknownUInt64Value = unknownSlot{typ: reflect.TypeFor[wrapperspb.UInt64Value]}
	unknownInt32Value  = unknownSlot{typ: reflect.TypeFor[wrapperspb.Int32Value]}
	unknownUInt32Value = unknownSlot{typ: reflect.TypeFor[wrapperspb.UInt32Value]}
	unknownBoolValue   = unknownSlot{typ: reflect.TypeFor[wrapperspb.BoolValue]}
	unknownStringValue = unknownSlot{typ: reflect.TypeFor[wrapperspb.StringValue]}
	unknownBytesValue  = unknownSlot{typ: reflect.TypeFor[wrapperspb.BytesValue]}
)

// none reports whether s is loaded and neither of the messages of the
// slot's type at pa and pb has unknown fields: the common case of comparing
// unknown fields, small enough to inline. Helpers compare them with
//
//	s.none(pa, pb) || s.equalSlow(pa, pb)
func (s *unknownSlot) none(pa, pb unsafe.Pointer) bool {
	return s.found.Load() && len(*s.at(pa))|len(*s.at(pb)) == 0
}

// equalSlow compares the unknown fields of the messages at pa and pb, both
// non-nil, when none does not tell.
func (s *unknownSlot) equalSlow(pa, pb unsafe.Pointer) bool {
	if s.load() {
		ua, ub := *s.at(pa), *s.at(pb)
		return string(ua) == string(ub) || EqualUnknown(ua, ub)
	}
	return EqualUnknown(s.message(pa).GetUnknown(), s.message(pb).GetUnknown())
}

// copy copies the unknown fields of the message of the slot's type at src
// into the one at dst.
func (s *unknownSlot) copy(dst, src unsafe.Pointer) {
	if !s.load() {
		if u := s.message(src).GetUnknown(); len(u) > 0 {
			s.message(dst).SetUnknown(append(protoreflect.RawFields(nil), u...))
		}
		return
	}
	if u := *s.at(src); len(u) > 0 {
		*s.at(dst) = append([]byte(nil), u...)
	}
}
