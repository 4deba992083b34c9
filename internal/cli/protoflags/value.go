package protoflags

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/dynamicpb"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// ParseScalar parses s as a value of a non-repeated field of fd's kind: a
// scalar, an enum or a message (JSON, or the text forms of Duration and
// Timestamp). The error says what was expected, not which flag.
func ParseScalar(fd protoreflect.FieldDescriptor, s string) (protoreflect.Value, error) {
	switch fd.Kind() {
	case protoreflect.BoolKind:
		b, err := strconv.ParseBool(s)
		if err != nil {
			return protoreflect.Value{}, errors.New("want true or false")
		}
		return protoreflect.ValueOfBool(b), nil
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind:
		n, err := strconv.ParseInt(s, 0, 32)
		if err != nil {
			return protoreflect.Value{}, numErr(err, "a 32-bit integer")
		}
		return protoreflect.ValueOfInt32(int32(n)), nil
	case protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
		n, err := strconv.ParseInt(s, 0, 64)
		if err != nil {
			return protoreflect.Value{}, numErr(err, "a 64-bit integer")
		}
		return protoreflect.ValueOfInt64(n), nil
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind:
		n, err := strconv.ParseUint(s, 0, 32)
		if err != nil {
			return protoreflect.Value{}, numErr(err, "an unsigned 32-bit integer")
		}
		return protoreflect.ValueOfUint32(uint32(n)), nil
	case protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		n, err := strconv.ParseUint(s, 0, 64)
		if err != nil {
			return protoreflect.Value{}, numErr(err, "an unsigned 64-bit integer")
		}
		return protoreflect.ValueOfUint64(n), nil
	case protoreflect.FloatKind:
		f, err := strconv.ParseFloat(s, 32)
		if err != nil {
			return protoreflect.Value{}, numErr(err, "a number")
		}
		return protoreflect.ValueOfFloat32(float32(f)), nil
	case protoreflect.DoubleKind:
		f, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return protoreflect.Value{}, numErr(err, "a number")
		}
		return protoreflect.ValueOfFloat64(f), nil
	case protoreflect.StringKind:
		if !utf8.ValidString(s) {
			return protoreflect.Value{}, errors.New("not valid UTF-8")
		}
		return protoreflect.ValueOfString(s), nil
	case protoreflect.BytesKind:
		b, err := base64.StdEncoding.DecodeString(s)
		if err != nil {
			return protoreflect.Value{}, errors.New("want base64 (standard encoding)")
		}
		return protoreflect.ValueOfBytes(b), nil
	case protoreflect.EnumKind:
		n, err := ParseEnum(fd.Enum(), s)
		if err != nil {
			return protoreflect.Value{}, err
		}
		return protoreflect.ValueOfEnum(n), nil
	case protoreflect.MessageKind, protoreflect.GroupKind:
		m, err := parseMessage(fd.Message(), s)
		if err != nil {
			return protoreflect.Value{}, err
		}
		return protoreflect.ValueOfMessage(m), nil
	}
	return protoreflect.Value{}, fmt.Errorf("fields of kind %s cannot be set from the command line", fd.Kind())
}

func numErr(err error, want string) error {
	if errors.Is(err, strconv.ErrRange) {
		return fmt.Errorf("out of range for %s", want)
	}
	return fmt.Errorf("want %s", want)
}

// ParseEnum returns the number of the value of ed that s names: a value name
// compared case-insensitively, with or without the enum's prefix (the common
// prefix of its value names, "MAINTENANCE_STATE_"), dashes read as
// underscores, or a defined number. The error lists the accepted names.
func ParseEnum(ed protoreflect.EnumDescriptor, s string) (protoreflect.EnumNumber, error) {
	want := strings.ToUpper(strings.ReplaceAll(strings.TrimSpace(s), "-", "_"))
	prefix := EnumPrefix(ed)
	values := ed.Values()
	for i := range values.Len() {
		v := values.Get(i)
		name := string(v.Name())
		if want == name || prefix+want == name {
			return v.Number(), nil
		}
	}
	if n, err := strconv.ParseInt(s, 10, 32); err == nil {
		if v := values.ByNumber(protoreflect.EnumNumber(n)); v != nil {
			return v.Number(), nil
		}
	}
	return 0, fmt.Errorf("unknown value; want one of %s", strings.Join(EnumNames(ed), ", "))
}

// EnumNames returns the names of ed's values without the enum's prefix, in
// declaration order.
func EnumNames(ed protoreflect.EnumDescriptor) []string {
	prefix := EnumPrefix(ed)
	values := ed.Values()
	names := make([]string, values.Len())
	for i := range values.Len() {
		names[i] = strings.TrimPrefix(string(values.Get(i).Name()), prefix)
	}
	return names
}

// EnumPrefix returns the prefix shared by every value name of ed, up to and
// including its last underscore ("TRACKED_STATE_"), or "" when the names
// share none or stripping it would leave an empty name or one starting with
// a digit.
func EnumPrefix(ed protoreflect.EnumDescriptor) string {
	values := ed.Values()
	if values.Len() == 0 {
		return ""
	}
	prefix := string(values.Get(0).Name())
	for i := 1; i < values.Len(); i++ {
		name := string(values.Get(i).Name())
		for !strings.HasPrefix(name, prefix) {
			prefix = prefix[:len(prefix)-1]
		}
	}
	prefix = prefix[:strings.LastIndexByte(prefix, '_')+1]
	for i := range values.Len() {
		rest := strings.TrimPrefix(string(values.Get(i).Name()), prefix)
		if rest == "" || (rest[0] >= '0' && rest[0] <= '9') {
			return ""
		}
	}
	return prefix
}

// EnumString returns the name of enum value n of ed without the enum's
// prefix, or the number when ed does not define it.
func EnumString(ed protoreflect.EnumDescriptor, n protoreflect.EnumNumber) string {
	v := ed.Values().ByNumber(n)
	if v == nil {
		return strconv.Itoa(int(n))
	}
	return strings.TrimPrefix(string(v.Name()), EnumPrefix(ed))
}

var (
	durationName  = (&durationpb.Duration{}).ProtoReflect().Descriptor().FullName()
	timestampName = (&timestamppb.Timestamp{}).ProtoReflect().Descriptor().FullName()
)

func parseMessage(md protoreflect.MessageDescriptor, s string) (protoreflect.Message, error) {
	switch md.FullName() {
	case durationName:
		d, err := time.ParseDuration(s)
		if err != nil {
			return nil, errors.New("want a duration such as 90s, 5m or 1h30m")
		}
		return durationpb.New(d).ProtoReflect(), nil
	case timestampName:
		t, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			return nil, errors.New("want a time in RFC 3339 form, such as 2025-01-02T15:04:05Z")
		}
		return timestamppb.New(t).ProtoReflect(), nil
	}
	m := newMessage(md)
	if err := protojson.Unmarshal([]byte(s), m.Interface()); err != nil {
		return nil, fmt.Errorf("want a JSON %s: %s", md.Name(), cleanJSONError(err))
	}
	return m, nil
}

// parseMessages parses a JSON object (one element) or a JSON array of
// objects (several) of message md.
func parseMessages(md protoreflect.MessageDescriptor, s string) ([]protoreflect.Message, error) {
	t := strings.TrimSpace(s)
	if !strings.HasPrefix(t, "[") {
		m, err := parseMessage(md, s)
		if err != nil {
			return nil, err
		}
		return []protoreflect.Message{m}, nil
	}
	var raw []json.RawMessage
	if err := json.Unmarshal([]byte(t), &raw); err != nil {
		return nil, fmt.Errorf("want a JSON %s or an array of them: %s", md.Name(), err)
	}
	out := make([]protoreflect.Message, 0, len(raw))
	for i, r := range raw {
		m, err := parseMessage(md, string(r))
		if err != nil {
			return nil, fmt.Errorf("element %d: %w", i, err)
		}
		out = append(out, m)
	}
	return out, nil
}

// newMessage returns a new message of md, of its Go type when one is
// registered.
func newMessage(md protoreflect.MessageDescriptor) protoreflect.Message {
	if mt, err := protoregistry.GlobalTypes.FindMessageByName(md.FullName()); err == nil {
		return mt.New()
	}
	return dynamicpb.NewMessage(md)
}

// cleanJSONError strips protojson's package prefix from an error message.
func cleanJSONError(err error) string {
	msg := err.Error()
	msg = strings.TrimPrefix(msg, "proto:")
	return strings.TrimSpace(strings.ReplaceAll(msg, "\u00a0", " "))
}

// FormatScalar renders a value of a non-repeated field the way ParseScalar
// reads it back: enums without prefix, durations and times in text form,
// other messages as compact JSON.
func FormatScalar(fd protoreflect.FieldDescriptor, v protoreflect.Value) string {
	switch fd.Kind() {
	case protoreflect.EnumKind:
		return EnumString(fd.Enum(), v.Enum())
	case protoreflect.BytesKind:
		return base64.StdEncoding.EncodeToString(v.Bytes())
	case protoreflect.FloatKind:
		return strconv.FormatFloat(v.Float(), 'g', -1, 32)
	case protoreflect.DoubleKind:
		return strconv.FormatFloat(v.Float(), 'g', -1, 64)
	case protoreflect.MessageKind, protoreflect.GroupKind:
		return FormatMessage(v.Message())
	}
	return v.String()
}

// FormatMessage renders a message in one line: Duration as a Go duration,
// Timestamp in RFC 3339, anything else as compact JSON with proto names.
func FormatMessage(m protoreflect.Message) string {
	switch m.Descriptor().FullName() {
	case durationName:
		if d, ok := m.Interface().(*durationpb.Duration); ok {
			return d.AsDuration().String()
		}
	case timestampName:
		if t, ok := m.Interface().(*timestamppb.Timestamp); ok {
			return t.AsTime().UTC().Format(time.RFC3339)
		}
	}
	b, err := protojson.MarshalOptions{UseProtoNames: true}.Marshal(m.Interface())
	if err != nil {
		return "<" + err.Error() + ">"
	}
	var out bytes.Buffer
	if err := json.Compact(&out, b); err != nil {
		return string(b)
	}
	return out.String()
}
