package protoflags

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/pflag"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/edgekit/edgekit/fieldmap"
)

// Field is one settable field of a message: a leaf of its field schema.
type Field struct {
	Name string // flag name, without dashes: "key.organization", "crm-on-edge"
	Path string // dot-joined proto field names: "crm_on_edge"
	Flag string // field flag, dot-joined field numbers: "11"
	// Descs are the field descriptors on the path, from the top message.
	Descs []protoreflect.FieldDescriptor
	// ListActions is true for a list or map whose message enables the add and
	// remove list actions.
	ListActions bool
}

// Desc returns the descriptor of the field itself (the last on the path).
func (f *Field) Desc() protoreflect.FieldDescriptor { return f.Descs[len(f.Descs)-1] }

// Options select the fields of a Set.
type Options struct {
	// Include reports whether a leaf becomes a flag; nil includes every leaf.
	Include func(f *Field) bool
	// ListActions adds the <name>-add and <name>-remove flags to lists and
	// maps that enable list actions.
	ListActions bool
	// Usage returns extra help for a field's flag, appended to the generated
	// text; nil adds none.
	Usage func(f *Field) string
}

// Set is the flags of the fields of one message type. Parse the command line
// with the FlagSet it was registered on, then read the values with Apply
// and Changes. A Set is used for one command line.
type Set struct {
	md     protoreflect.MessageDescriptor
	schema *fieldmap.Schema
	opts   Options
	fields []*Field
	values []*value // per field, in flag order
	byName map[string]int
}

// New returns the Set of the leaves of schema, the field schema of the
// message md (the generated (*M).FieldSchema()) that opts.Include selects.
// It fails when a schema path does not resolve in md.
func New(md protoreflect.MessageDescriptor, schema *fieldmap.Schema, opts Options) (*Set, error) {
	if schema == nil || protoreflect.FullName(schema.Message()) != md.FullName() {
		return nil, fmt.Errorf("protoflags: schema of %v does not describe %s", schemaName(schema), md.FullName())
	}
	s := &Set{md: md, schema: schema, opts: opts, byName: map[string]int{}}
	for _, flag := range schema.Leaves() {
		sf, _ := schema.Lookup(flag)
		descs, err := resolve(md, sf.Path)
		if err != nil {
			return nil, err
		}
		f := &Field{Name: FlagName(sf.Path), Path: sf.Path, Flag: sf.Flag, Descs: descs, ListActions: sf.ListActions}
		if opts.Include != nil && !opts.Include(f) {
			continue
		}
		s.byName[f.Name] = len(s.fields)
		s.fields = append(s.fields, f)
		s.values = append(s.values, &value{field: f})
	}
	return s, nil
}

func schemaName(s *fieldmap.Schema) string {
	if s == nil {
		return "<nil>"
	}
	return s.Message()
}

// resolve returns the descriptors of a dot-joined path of proto names.
func resolve(md protoreflect.MessageDescriptor, path string) ([]protoreflect.FieldDescriptor, error) {
	var descs []protoreflect.FieldDescriptor
	cur := md
	for name := range strings.SplitSeq(path, ".") {
		if cur == nil {
			return nil, fmt.Errorf("protoflags: %s: path %s goes below a field that is not a message", md.FullName(), path)
		}
		fd := cur.Fields().ByName(protoreflect.Name(name))
		if fd == nil {
			return nil, fmt.Errorf("protoflags: %s has no field %s", md.FullName(), path)
		}
		descs = append(descs, fd)
		cur = fd.Message()
	}
	return descs, nil
}

// FlagName returns the flag name of a dot-joined proto field name path:
// each underscore becomes a dash ("cloudlet_key.name" -> "cloudlet-key.name").
func FlagName(path string) string { return strings.ReplaceAll(path, "_", "-") }

// Message returns the descriptor of the Set's message.
func (s *Set) Message() protoreflect.MessageDescriptor { return s.md }

// Schema returns the field schema of the Set's message.
func (s *Set) Schema() *fieldmap.Schema { return s.schema }

// Fields returns the fields of the Set, in flag order. The slice must not be
// modified.
func (s *Set) Fields() []*Field { return s.fields }

// Lookup returns the field of a flag name ("crm-on-edge") or a proto path
// ("crm_on_edge").
func (s *Set) Lookup(name string) (*Field, bool) {
	i, ok := s.byName[FlagName(name)]
	if !ok {
		return nil, false
	}
	return s.fields[i], true
}

// Register defines the Set's flags on fs. It fails, naming the flag, when a
// name is already defined on fs or on one of reserved (the persistent flags
// of parent commands, which a field flag would hide).
func (s *Set) Register(fs *pflag.FlagSet, reserved ...*pflag.FlagSet) error {
	define := func(name string, v *actionValue, usage string) error {
		for _, r := range append([]*pflag.FlagSet{fs}, reserved...) {
			if r != nil && r.Lookup(name) != nil {
				return fmt.Errorf("protoflags: flag --%s is defined twice (a field's flag clashes with another flag)", name)
			}
		}
		fl := fs.VarPF(v, name, "", usage)
		if d := v.field.Desc(); d.Kind() == protoreflect.BoolKind && !d.IsList() && !d.IsMap() {
			fl.NoOptDefVal = "true"
		}
		return nil
	}
	for i, f := range s.fields {
		v := s.values[i]
		if err := define(f.Name, v.forAction(fieldmap.Replace), s.usage(f, fieldmap.Replace)); err != nil {
			return err
		}
		if !s.opts.ListActions || !f.ListActions {
			continue
		}
		for _, act := range []fieldmap.Action{fieldmap.Add, fieldmap.Remove} {
			if err := define(f.Name+"-"+act.String(), v.forAction(act), s.usage(f, act)); err != nil {
				return err
			}
		}
	}
	return nil
}

// Set sets the flag of a field by flag name or proto path, as if given on
// the command line. It fails when the field has no flag in the Set or the
// value does not parse.
func (s *Set) Set(name, val string) error {
	i, ok := s.byName[FlagName(name)]
	if !ok {
		return fmt.Errorf("no field %s", name)
	}
	if err := s.values[i].forAction(fieldmap.Replace).Set(val); err != nil {
		return fmt.Errorf("invalid value %q for %s: %w", val, s.fields[i].Name, err)
	}
	return nil
}

// Change is one field a command line set.
type Change struct {
	Field  *Field
	Action fieldmap.Action
	// Names are the flags that set it ("flavor-names-add").
	Names []string
}

// FieldFlag returns the change in the form of an update request's fields:
// the field flag, with ":add" or ":remove" for a list action.
func (c Change) FieldFlag() string {
	if c.Action == fieldmap.Replace {
		return c.Field.Flag
	}
	return c.Field.Flag + ":" + c.Action.String()
}

// ErrConflict is matched by the error of Changes and Apply when two flags set
// one field in different ways.
var ErrConflict = errors.New("conflicting flags")

// Changes returns the fields the command line set, in flag order. It fails
// when one field was given with more than one action (--x with --x-add).
func (s *Set) Changes() ([]Change, error) {
	var out []Change
	for i, v := range s.values {
		acts := v.actions()
		if len(acts) == 0 {
			continue
		}
		if len(acts) > 1 {
			names := make([]string, len(acts))
			for j, a := range acts {
				names[j] = "--" + actionName(s.fields[i].Name, a)
			}
			return nil, fmt.Errorf("%w: %s set field %s in different ways; use one", ErrConflict, strings.Join(names, " and "), s.fields[i].Path)
		}
		out = append(out, Change{Field: s.fields[i], Action: acts[0], Names: []string{actionName(s.fields[i].Name, acts[0])}})
	}
	return out, checkOneofs(out)
}

// checkOneofs fails when two changes set different members of one oneof
// (at the same place in the message).
func checkOneofs(changes []Change) error {
	type member struct{ path, name string }
	chosen := map[string]member{} // oneof's place -> the member first set there
	for _, c := range changes {
		prefix := ""
		for _, fd := range c.Field.Descs {
			if od := fd.ContainingOneof(); od != nil && !od.IsSynthetic() {
				place := prefix + string(od.Name())
				m := member{path: prefix + string(fd.Name()), name: c.Names[0]}
				if prev, ok := chosen[place]; ok && prev.path != m.path {
					return fmt.Errorf("%w: --%s and --%s set different members of oneof %s; use one", ErrConflict, prev.name, m.name, place)
				}
				chosen[place] = m
			}
			prefix += string(fd.Name()) + "."
		}
	}
	return nil
}

func actionName(name string, act fieldmap.Action) string {
	if act == fieldmap.Replace {
		return name
	}
	return name + "-" + act.String()
}

// Apply writes the value of every field the command line set into m, a
// message of the Set's type, replacing what m held in those fields
// (creating the sub-messages on the way). For a list action the field holds
// the elements to add or remove.
func (s *Set) Apply(m protoreflect.Message) error {
	if m.Descriptor().FullName() != s.md.FullName() {
		return fmt.Errorf("protoflags: Apply of %s flags to a %s", s.md.FullName(), m.Descriptor().FullName())
	}
	changes, err := s.Changes()
	if err != nil {
		return err
	}
	for _, c := range changes {
		v := s.values[slices.Index(s.fields, c.Field)]
		parent := m
		for _, fd := range c.Field.Descs[:len(c.Field.Descs)-1] {
			parent = parent.Mutable(fd).Message()
		}
		v.store(parent)
	}
	return nil
}
