package fieldmap

import (
	"fmt"
	"strings"
)

// Kind says how CopyInFields treats the field a flag names.
type Kind uint8

const (
	// KindScalar is a scalar, enum or bytes field, or a message copied as
	// one value (well-known types, atomic fields, a recursion stop).
	KindScalar Kind = iota
	// KindMessage is a message field with flags below it.
	KindMessage
	// KindList is a repeated field: one unit for copying and diffing.
	KindList
	// KindMap is a map field: one unit for copying and diffing.
	KindMap
)

func (k Kind) String() string {
	switch k {
	case KindScalar:
		return "scalar"
	case KindMessage:
		return "message"
	case KindList:
		return "list"
	case KindMap:
		return "map"
	}
	return fmt.Sprintf("Kind(%d)", uint8(k))
}

// Field describes one flag of a message.
type Field struct {
	Flag string // dot-joined field numbers, "11.3"
	Path string // dot-joined proto field names, "status.task_name"
	Kind Kind
	// Leaf is true for the flags listed in <Msg>AllFields: the smallest
	// units CopyInFields copies (everything but message fields with flags
	// below them, and flags under a list or map, which belong to it).
	Leaf bool
	// ListActions is true on list and map flags whose message enables the
	// add and remove list actions.
	ListActions bool
}

// Schema is the set of flags one message type has. Generated code builds one
// per message; it is immutable and safe for concurrent use.
type Schema struct {
	message string
	fields  []Field
	byFlag  map[string]int
	byPath  map[string]int
	leaves  []string
}

// NewSchema builds the schema of the message with the given full proto name.
// Generated code calls it; fields must be in flag order.
func NewSchema(message string, fields []Field) *Schema {
	s := &Schema{
		message: message,
		fields:  fields,
		byFlag:  make(map[string]int, len(fields)),
		byPath:  make(map[string]int, len(fields)),
	}
	for i, f := range fields {
		s.byFlag[f.Flag] = i
		s.byPath[f.Path] = i
		if f.Leaf {
			s.leaves = append(s.leaves, f.Flag)
		}
	}
	return s
}

// Message returns the full proto name of the message.
func (s *Schema) Message() string { return s.message }

// Fields returns every flag of the message, in flag order. The slice must not
// be modified.
func (s *Schema) Fields() []Field { return s.fields }

// Leaves returns the leaf flags (<Msg>AllFields). The slice must not be
// modified.
func (s *Schema) Leaves() []string { return s.leaves }

// Lookup returns the field a flag names.
func (s *Schema) Lookup(flag string) (Field, bool) {
	i, ok := s.byFlag[flag]
	if !ok {
		return Field{}, false
	}
	return s.fields[i], true
}

// FlagOf returns the flag of a dot-joined proto field name path
// ("status.task_name"), so that tools can accept names from people and store
// numbers.
func (s *Schema) FlagOf(path string) (string, error) {
	i, ok := s.byPath[path]
	if !ok {
		return "", &UnknownFieldError{Message: s.message, Flag: path}
	}
	return s.fields[i].Flag, nil
}

// Check returns an error naming the first flag of fm (in Fields order) that
// the message does not have, or a list action set where it is not allowed.
// A nil fm is valid.
func (s *Schema) Check(fm *FieldMap) error {
	if fm == nil {
		return nil
	}
	for _, flag := range fm.Fields() {
		f, ok := s.Lookup(flag)
		if !ok {
			return &UnknownFieldError{Message: s.message, Flag: flag}
		}
		act := fm.set[flag]
		if act == Replace {
			continue
		}
		switch {
		case f.Kind != KindList && f.Kind != KindMap:
			return &ListActionError{Message: s.message, Flag: flag, Action: act,
				Reason: fmt.Sprintf("field %s is not a repeated or map field", f.Path)}
		case !f.ListActions:
			return &ListActionError{Message: s.message, Flag: flag, Action: act,
				Reason: "message does not enable list actions (option (edgekit.options.v1.message).list_actions)"}
		}
	}
	return nil
}

// Parse builds a FieldMap from flags, each either a flag ("11.3") or a
// dot-joined field name path ("status.task_name"). An element may end in
// ":add" or ":remove" to set a list action. The error names the first
// element the message does not have.
func (s *Schema) Parse(elems ...string) (*FieldMap, error) {
	fm := s.NewFieldMap()
	for _, e := range elems {
		name, act, err := splitAction(e)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", s.message, err)
		}
		flag := name
		if _, ok := s.byFlag[name]; !ok {
			if flag, err = s.FlagOf(name); err != nil {
				return nil, err
			}
		}
		fm.SetAction(flag, act)
	}
	if err := s.Check(fm); err != nil {
		return nil, err
	}
	return fm, nil
}

func splitAction(e string) (string, Action, error) {
	name, suffix, found := strings.Cut(e, ":")
	if !found {
		return name, Replace, nil
	}
	switch suffix {
	case "replace":
		return name, Replace, nil
	case "add":
		return name, Add, nil
	case "remove":
		return name, Remove, nil
	}
	return "", Replace, fmt.Errorf("field %q: unknown list action %q (want replace, add or remove)", name, suffix)
}

// New builds a FieldMap of the schema's message from flags, and fails naming
// the first flag the message does not have.
func (s *Schema) New(flags ...string) (*FieldMap, error) {
	fm := s.NewFieldMap()
	for _, f := range flags {
		if _, ok := s.byFlag[f]; !ok {
			return nil, &UnknownFieldError{Message: s.message, Flag: f}
		}
		fm.Set(f)
	}
	return fm, nil
}

// NewFieldMap returns an empty FieldMap bound to the schema.
func (s *Schema) NewFieldMap() *FieldMap {
	return &FieldMap{schema: s}
}

// All returns a FieldMap with every leaf flag set.
func (s *Schema) All() *FieldMap {
	fm := s.NewFieldMap()
	fm.Set(s.leaves...)
	return fm
}
