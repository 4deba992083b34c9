package apifields

import (
	"errors"
	"fmt"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/edgekit/edgekit/fieldmap"
)

// ErrNotSettable is matched (errors.Is) by every error of CheckCreate and
// CheckUpdate.
var ErrNotSettable = errors.New("field not settable")

// FieldError names a field a user may not set in an operation.
type FieldError struct {
	Message protoreflect.FullName // the object's message
	Flag    string                // the field's flag, "2" or "10.1"
	Path    string                // the field's dot-joined proto names, "config.region"
	Access  Access                // the field's Access
	Update  bool                  // the operation was an update (else a create)
	// Via is the flag the user set when the field is below it (setting a
	// message field writes the whole sub-message); empty otherwise.
	Via string
}

func (e *FieldError) Error() string {
	var why string
	switch e.Access {
	case Owned:
		why = "is set by the controller, not by users"
	case Key:
		why = "is part of the key: it names the object and cannot change"
	case CreateOnly:
		why = "can be set only when the object is created"
	default:
		why = "cannot be set"
	}
	msg := fmt.Sprintf("%s: field %s (%s) %s", e.Message, e.Path, e.Flag, why)
	if e.Via != "" {
		msg += fmt.Sprintf("; it is below %s, which sets it too", e.Via)
	}
	return msg
}

// Is reports whether target is ErrNotSettable.
func (e *FieldError) Is(target error) bool { return target == ErrNotSettable }

// CheckUpdate checks fm against Default; see (*Table).CheckUpdate.
func CheckUpdate(fm *fieldmap.FieldMap) error { return Default.CheckUpdate(fm) }

// CheckCreate checks m against Default; see (*Table).CheckCreate.
func CheckCreate(m proto.Message) error { return Default.CheckCreate(m) }

// CheckUpdate returns a *FieldError naming the first flag of fm (in flag
// order) that an update may not change: a key, create-only or owned field,
// or a message field with such a field below it. fm must be bound to the
// schema of an object message (it has one when it was built by the
// generated New<Msg>FieldMap or a Schema); a FieldMap without a schema, or
// of a message the table does not know, is refused.
func (t *Table) CheckUpdate(fm *fieldmap.FieldMap) error {
	if fm == nil {
		return nil
	}
	s := fm.Schema()
	if s == nil {
		return fmt.Errorf("%w: field map has no schema", ErrNotSettable)
	}
	msg := protoreflect.FullName(s.Message())
	if !t.Known(msg) {
		return fmt.Errorf("%w: %s is not an object of the controller's API", ErrNotSettable, msg)
	}
	for _, flag := range fm.Fields() {
		f, ok := s.Lookup(flag)
		if !ok {
			return &fieldmap.UnknownFieldError{Message: s.Message(), Flag: flag}
		}
		if a := t.Of(msg, flag); !a.CanUpdate() {
			return &FieldError{Message: msg, Flag: flag, Path: f.Path, Access: a, Update: true}
		}
		if f.Kind != fieldmap.KindMessage {
			continue
		}
		for _, below := range s.Fields() {
			if !isBelow(below.Flag, flag) {
				continue
			}
			if a := t.Of(msg, below.Flag); !a.CanUpdate() {
				return &FieldError{Message: msg, Flag: below.Flag, Path: below.Path, Access: a, Update: true, Via: f.Path}
			}
		}
	}
	return nil
}

// CheckCreate returns a *FieldError naming the first field (in field number
// order, depth first) set in m that users may not set on create: an owned
// field. A message the table does not know or owns as a whole is refused.
func (t *Table) CheckCreate(m proto.Message) error {
	if m == nil {
		return nil
	}
	r := m.ProtoReflect()
	msg := r.Descriptor().FullName()
	if !t.Known(msg) {
		return fmt.Errorf("%w: %s is not an object of the controller's API", ErrNotSettable, msg)
	}
	if t.Owned[msg] {
		return fmt.Errorf("%w: %s is written by resource managers only", ErrNotSettable, msg)
	}
	return t.checkSet(msg, r, "", "")
}

func (t *Table) checkSet(top protoreflect.FullName, m protoreflect.Message, flagPrefix, pathPrefix string) error {
	fields := m.Descriptor().Fields()
	for i := range fields.Len() {
		fd := fields.Get(i)
		if !m.Has(fd) {
			continue
		}
		flag := flagPrefix + fmt.Sprint(fd.Number())
		path := pathPrefix + string(fd.Name())
		if a := t.Of(top, flag); !a.CanCreate() {
			return &FieldError{Message: top, Flag: flag, Path: path, Access: a}
		}
		if fd.Kind() == protoreflect.MessageKind && !fd.IsList() && !fd.IsMap() {
			if err := t.checkSet(top, m.Get(fd).Message(), flag+".", path+"."); err != nil {
				return err
			}
		}
	}
	return nil
}

// isBelow reports whether flag is a strict descendant of parent.
func isBelow(flag, parent string) bool {
	return len(flag) > len(parent) && flag[len(parent)] == '.' && flag[:len(parent)] == parent
}
