package protoflags

import (
	"fmt"
	"strings"

	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/edgekit/edgekit/fieldmap"
)

// value holds what the command line gave for one field, under one action at
// most (several actions are a conflict Changes reports).
type value struct {
	field *Field
	set   map[fieldmap.Action]bool
	// scalar is the value of a singular field.
	scalar protoreflect.Value
	// list holds the elements of a repeated field, in command-line order.
	list []protoreflect.Value
	// keys and vals hold the entries of a map field, in command-line order.
	keys []protoreflect.MapKey
	vals []protoreflect.Value
	raw  []string
}

func (v *value) forAction(act fieldmap.Action) *actionValue {
	return &actionValue{value: v, act: act}
}

func (v *value) actions() []fieldmap.Action {
	var out []fieldmap.Action
	for _, a := range []fieldmap.Action{fieldmap.Replace, fieldmap.Add, fieldmap.Remove} {
		if v.set[a] {
			out = append(out, a)
		}
	}
	return out
}

// store writes the value into parent, the message holding the field.
func (v *value) store(parent protoreflect.Message) {
	fd := v.field.Desc()
	switch {
	case fd.IsList():
		parent.Clear(fd)
		l := parent.Mutable(fd).List()
		for _, e := range v.list {
			l.Append(e)
		}
	case fd.IsMap():
		parent.Clear(fd)
		mp := parent.Mutable(fd).Map()
		for i, k := range v.keys {
			mp.Set(k, v.vals[i])
		}
	default:
		parent.Set(fd, v.scalar)
	}
}

// actionValue is the pflag.Value of one flag of a field: the field's own
// flag (Replace) or its -add or -remove flag.
type actionValue struct {
	*value
	act fieldmap.Action
}

// Set parses one occurrence of the flag.
func (a *actionValue) Set(s string) error {
	fd := a.field.Desc()
	switch {
	case fd.IsMap():
		k, v, err := parseEntry(fd, s, a.act == fieldmap.Remove)
		if err != nil {
			return err
		}
		a.keys = append(a.keys, k)
		a.vals = append(a.vals, v)
	case fd.IsList() && fd.Message() != nil:
		ms, err := parseMessages(fd.Message(), s)
		if err != nil {
			return err
		}
		for _, m := range ms {
			a.list = append(a.list, protoreflect.ValueOfMessage(m))
		}
	case fd.IsList():
		v, err := ParseScalar(fd, s)
		if err != nil {
			return err
		}
		a.list = append(a.list, v)
	default:
		v, err := ParseScalar(fd, s)
		if err != nil {
			return err
		}
		a.scalar = v
	}
	if a.set == nil {
		a.set = map[fieldmap.Action]bool{}
	}
	a.set[a.act] = true
	a.raw = append(a.raw, s)
	return nil
}

// parseEntry parses "key=value" for a map field; with keyOnly (a remove)
// the whole string is the key and the value is the zero value.
func parseEntry(fd protoreflect.FieldDescriptor, s string, keyOnly bool) (protoreflect.MapKey, protoreflect.Value, error) {
	ks, vs, found := strings.Cut(s, "=")
	if keyOnly {
		ks, vs, found = s, "", false
	} else if !found {
		return protoreflect.MapKey{}, protoreflect.Value{}, fmt.Errorf("want key=value")
	}
	k, err := ParseScalar(fd.MapKey(), ks)
	if err != nil {
		return protoreflect.MapKey{}, protoreflect.Value{}, fmt.Errorf("key %q: %w", ks, err)
	}
	var v protoreflect.Value
	switch {
	case !found && fd.MapValue().Message() != nil:
		v = protoreflect.ValueOfMessage(newMessage(fd.MapValue().Message()))
	case !found:
		v = fd.MapValue().Default()
	default:
		if v, err = ParseScalar(fd.MapValue(), vs); err != nil {
			return protoreflect.MapKey{}, protoreflect.Value{}, fmt.Errorf("value of %q: %w", ks, err)
		}
	}
	return k.MapKey(), v, nil
}

// String returns the values given so far, for pflag's help defaults.
func (a *actionValue) String() string {
	if a == nil || a.value == nil || !a.set[a.act] {
		return ""
	}
	return strings.Join(a.raw, ",")
}

// Type names the kind of value, in help text.
func (a *actionValue) Type() string { return TypeName(a.field.Desc(), a.act == fieldmap.Remove) }

// TypeName returns the short name of the value a field's flag takes, as help
// shows it: string, int32, bool, enum, duration, time, json, key=value, or
// key (keyOnly: a map remove). Repeated fields say so in their usage.
func TypeName(fd protoreflect.FieldDescriptor, keyOnly bool) string {
	if fd.IsMap() {
		if keyOnly {
			return "key"
		}
		return "key=value"
	}
	switch fd.Kind() {
	case protoreflect.EnumKind:
		return "enum"
	case protoreflect.MessageKind, protoreflect.GroupKind:
		switch fd.Message().FullName() {
		case durationName:
			return "duration"
		case timestampName:
			return "time"
		}
		return "json"
	case protoreflect.BytesKind:
		return "base64"
	case protoreflect.FloatKind, protoreflect.DoubleKind:
		return "float"
	case protoreflect.Sint32Kind, protoreflect.Sfixed32Kind:
		return "int32"
	case protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
		return "int64"
	case protoreflect.Fixed32Kind:
		return "uint32"
	case protoreflect.Fixed64Kind:
		return "uint64"
	}
	return fd.Kind().String()
}

// usage returns the help text of a field's flag for an action.
func (s *Set) usage(f *Field, act fieldmap.Action) string {
	fd := f.Desc()
	var b strings.Builder
	switch act {
	case fieldmap.Add:
		fmt.Fprintf(&b, "add to %s", f.Path)
	case fieldmap.Remove:
		fmt.Fprintf(&b, "remove from %s", f.Path)
	default:
		b.WriteString(f.Path)
	}
	switch {
	case fd.IsMap() && act == fieldmap.Remove:
		b.WriteString(" (repeatable: one key each)")
	case fd.IsMap():
		b.WriteString(" (repeatable: one key=value each)")
	case fd.IsList() && fd.Message() != nil:
		b.WriteString(" (repeatable: a JSON object or array each)")
	case fd.IsList():
		b.WriteString(" (repeatable: one element each)")
	}
	if fd.Kind() == protoreflect.EnumKind {
		fmt.Fprintf(&b, "; one of %s", strings.Join(EnumNames(fd.Enum()), ", "))
	}
	if s.opts.Usage != nil {
		if extra := s.opts.Usage(f); extra != "" {
			b.WriteString("; ")
			b.WriteString(extra)
		}
	}
	return b.String()
}
