package fieldmap

import (
	"fmt"
	"math/bits"
	"strconv"
	"strings"
	"sync"
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
	// ListActions is true on list and map flags, not under another list,
	// whose message enables the add and remove list actions.
	ListActions bool
}

// Shape is the layout of the fields of one message type at one place of a
// flag tree: generated code declares one per message type (and one per
// place where recursion stops make the layout differ) and builds the Schema
// of a top-level message from its Shape, so that the size of generated code
// grows with the number of message types, not with the number of flags.
//
// A shape whose fields carry their Go layout (Size, and on each field Off
// with an Op, or a Value) also drives the table-driven DiffFields of this
// package (Diff).
type Shape struct {
	Fields []ShapeField // by field number
	// Size is the size of the message's Go struct.
	Size uintptr

	run shapeRun // prepared for Diff when a schema of it loads
}

// ShapeField is one field of a Shape.
type ShapeField struct {
	Number int32
	Name   string
	Kind   Kind
	// Sub is the layout below the field: set on message fields and lists of
	// messages that have flags below them, nil elsewhere.
	Sub *Shape
	// Off is the offset of a field with an Op in the message's Go struct;
	// Op is how to compare it. Other fields have a Value.
	Off   uintptr
	Op    Op
	Value Value
}

// Schema is the set of flags one message type has. Generated code builds one
// per message; it is immutable and safe for concurrent use. Flags are
// numbered in flag order (depth first, children by field number), so the
// flags below a flag follow it: generated code addresses them by number.
type Schema struct {
	message string

	once        sync.Once
	shape       *Shape // flattened on first use when set
	listActions bool

	fields []Field
	byPath map[string]int32
	leaves []string
	end    []int32  // end[i]: one past the last flag below flag i
	parent []int32  // parent[i]: the flag above flag i, or -1
	words  int      // uint64 words of one bit set over the flags
	marks  []marks  // by flag, when words is 1
	marks2 []marks2 // by flag, when words is 2

	// The flag tree: nodes[i] locates the children of flag i (of the
	// message for i = -1, kept at len(fields)) in kids and direct (see
	// treeNode). byFlag replaces it when a flag of NewSchema is not the
	// canonical numbers of its path.
	nodes  []treeNode
	kids   []kid
	direct []int32
	byFlag map[string]int32
	hash   flagHash // the flags when the tree is used (not byFlag)
}

// NewSchema builds the schema of the message with the given full proto name
// from its flags, which must be in flag order (parents before children,
// children by field number). Each flag should be the dot-joined field
// numbers of its path ("11.3", no leading zeros): lookups of such flags
// walk the flag tree, others cost a map lookup.
func NewSchema(message string, fields []Field) *Schema {
	s := &Schema{message: message, fields: fields}
	s.once.Do(s.index)
	return s
}

// NewShapeSchema builds the schema of the message with the given full proto
// name from its Shape; listActions is the message's list_actions option.
// The flags are computed on first use. Generated code calls it.
func NewShapeSchema(message string, shape *Shape, listActions bool) *Schema {
	return &Schema{message: message, shape: shape, listActions: listActions}
}

// load computes the flags of a shape schema, once.
func (s *Schema) load() {
	s.once.Do(func() {
		if s.shape != nil {
			s.flatten(s.shape, "", "", false)
			if s.shape.Size > 0 {
				s.shape.prepare() // for Diff
			}
		}
		s.index()
	})
}

func (s *Schema) flatten(sh *Shape, flagPrefix, pathPrefix string, underList bool) {
	for _, f := range sh.Fields {
		flag := flagPrefix + strconv.Itoa(int(f.Number))
		path := pathPrefix + f.Name
		list := f.Kind == KindList || f.Kind == KindMap
		s.fields = append(s.fields, Field{
			Flag:        flag,
			Path:        path,
			Kind:        f.Kind,
			Leaf:        f.Kind != KindMessage && !underList,
			ListActions: s.listActions && list && !underList,
		})
		if f.Sub != nil {
			s.flatten(f.Sub, flag+".", path+".", underList || f.Kind == KindList)
		}
	}
}

// index builds the lookup tables of s.fields.
func (s *Schema) index() {
	n := len(s.fields)
	s.byPath = make(map[string]int32, n)
	s.end = make([]int32, n)
	s.parent = make([]int32, n)
	s.words = (n + 63) / 64
	var stack []int32 // open ancestors of the flag being indexed
	for i, f := range s.fields {
		s.byPath[f.Path] = int32(i)
		if f.Leaf {
			s.leaves = append(s.leaves, f.Flag)
		}
		for len(stack) > 0 && !isBelow(f.Flag, s.fields[stack[len(stack)-1]].Flag) {
			s.end[stack[len(stack)-1]] = int32(i)
			stack = stack[:len(stack)-1]
		}
		s.parent[i] = -1
		if len(stack) > 0 {
			s.parent[i] = stack[len(stack)-1]
		}
		stack = append(stack, int32(i))
	}
	for _, j := range stack {
		s.end[j] = int32(n)
	}
	if !s.indexKids() {
		s.byFlag = make(map[string]int32, n)
		for i, f := range s.fields {
			s.byFlag[f.Flag] = int32(i)
		}
	} else {
		s.buildHash()
	}
	if s.words == 2 {
		s.marks2 = make([]marks2, n)
		for i := range s.fields {
			m := &s.marks2[i]
			fillBits(m.cover[:], int32(i), s.end[i])
			for p := s.parent[i]; p >= 0; p = s.parent[p] {
				m.below[p>>6] |= 1 << (p & 63)
			}
		}
	}
	if s.words == 1 {
		s.marks = make([]marks, n)
		for i := range s.fields {
			m := &s.marks[i]
			for j := int32(i); j < s.end[i]; j++ {
				m.cover |= 1 << j
			}
			for p := s.parent[i]; p >= 0; p = s.parent[p] {
				m.below |= 1 << p
			}
		}
	}
}

// marks are the bits setting one flag of a schema of at most 64 flags sets
// in a FieldMap's bit sets besides its own: cover, itself and the flags
// below it; below, its ancestors.
type marks struct{ cover, below uint64 }

// marks2 are marks for a schema of 65 to 128 flags.
type marks2 struct{ cover, below [2]uint64 }

// isBelow reports whether flag is a proper descendant of anc.
func isBelow(flag, anc string) bool {
	return len(flag) > len(anc) && flag[len(anc)] == '.' && flag[:len(anc)] == anc
}

// Message returns the full proto name of the message.
func (s *Schema) Message() string { return s.message }

// Fields returns every flag of the message, in flag order. The slice must not
// be modified.
func (s *Schema) Fields() []Field {
	s.load()
	return s.fields
}

// Leaves returns the leaf flags (<Msg>AllFields). The slice must not be
// modified.
func (s *Schema) Leaves() []string {
	s.load()
	return s.leaves
}

// Len returns how many flags the message has.
func (s *Schema) Len() int {
	s.load()
	return len(s.fields)
}

// Lookup returns the field a flag names.
func (s *Schema) Lookup(flag string) (Field, bool) {
	i, ok := s.id(flag)
	if !ok {
		return Field{}, false
	}
	return s.fields[i], true
}

// id returns the number of flag in the schema.
func (s *Schema) id(flag string) (int32, bool) {
	s.load()
	i, exact := s.find(flag)
	return i, exact
}

// FlagOf returns the flag of a dot-joined proto field name path
// ("status.task_name"), so that tools can accept names from people and store
// numbers.
func (s *Schema) FlagOf(path string) (string, error) {
	s.load()
	i, ok := s.byPath[path]
	if !ok {
		return "", &UnknownFieldError{Message: s.message, Flag: path}
	}
	return s.fields[i].Flag, nil
}

// Check returns an error naming the first flag of fm (in Fields order) that
// the message does not have, or a list action set where it is not allowed
// or would have no effect. A nil fm is valid; a fm bound to the schema of
// another message is an error.
func (s *Schema) Check(fm *FieldMap) error {
	if fm == nil {
		return nil
	}
	if fs := fm.schema; fs != nil && fs != s && fs.message != s.message {
		return &SchemaMismatchError{Want: s.message, Got: fs.message}
	}
	for _, flag := range fm.Fields() {
		i, ok := s.id(flag)
		if !ok {
			return &UnknownFieldError{Message: s.message, Flag: flag}
		}
		act := fm.ListAction(flag)
		if act == Replace {
			continue
		}
		if reason := s.actionProblem(fm, i); reason != "" {
			return &ListActionError{Message: s.message, Flag: flag, Action: act, Reason: reason}
		}
	}
	return nil
}

// actionProblem explains why a list action cannot be set on flag i of a
// map, or returns "".
func (s *Schema) actionProblem(fm *FieldMap, i int32) string {
	f := s.fields[i]
	if f.Kind != KindList && f.Kind != KindMap {
		return fmt.Sprintf("field %s is not a repeated or map field", f.Path)
	}
	for p := s.parent[i]; p >= 0; p = s.parent[p] {
		if s.fields[p].Kind == KindList {
			return fmt.Sprintf("the flag lies under list %s (%s), which is copied as one unit: set the action on %s",
				s.fields[p].Flag, s.fields[p].Path, s.fields[p].Flag)
		}
	}
	for p := s.parent[i]; p >= 0; p = s.parent[p] {
		if fm.IsSet(s.fields[p].Flag) {
			return fmt.Sprintf("its ancestor %s (%s) is set, which copies the whole sub-message: clear it or drop the action",
				s.fields[p].Flag, s.fields[p].Path)
		}
	}
	if !f.ListActions {
		return "message does not enable list actions (option (edgekit.options.v1.message).list_actions)"
	}
	return ""
}

// Parse builds a FieldMap from flags, each either a flag ("11.3") or a
// dot-joined field name path ("status.task_name"). An element may end in
// ":add" or ":remove" to set a list action. The error names the first
// element the message does not have, or a list action it cannot take.
func (s *Schema) Parse(elems ...string) (*FieldMap, error) {
	fm := &FieldMap{}
	if err := fm.parse(s, elems); err != nil {
		return nil, err
	}
	return fm, nil
}

// parse binds an empty fm to s and sets elems (see Parse).
func (fm *FieldMap) parse(s *Schema, elems []string) error {
	fm.init(s)
	for _, e := range elems {
		name, act, err := splitAction(e)
		if err != nil {
			return fmt.Errorf("%s: %w", s.message, err)
		}
		i, ok := s.find(name)
		if !ok {
			j, found := s.byPath[name]
			if !found {
				return &UnknownFieldError{Message: s.message, Flag: name}
			}
			i = j
		}
		fm.setID(i, act)
	}
	return s.Check(fm)
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
	return s.Init(new(FieldMap), flags...)
}

// Init makes fm (whatever it held) a map of the schema's message holding
// flags and returns it, or returns nil and an error naming the first flag
// the message does not have. Generated New<Msg>FieldMap constructors call
// it as Init(new(FieldMap), flags...), which is small enough for the
// compiler to inline into their callers: a map built and used in one
// function then lives on its stack, with no allocation.
func (s *Schema) Init(fm *FieldMap, flags ...string) (*FieldMap, error) {
	s.load()
	if s.marks != nil {
		return fm.initWord(s, flags)
	}
	if s.marks2 != nil {
		return fm.initWords2(s, flags)
	}
	*fm = FieldMap{}
	fm.init(s)
	ws, w := fm.words(), int(fm.w)
	set, cover, below := ws[:w], ws[w:2*w], ws[2*w:]
	h := &s.hash
	for _, f := range flags {
		i, _, _ := h.shortFind(f)
		if i < 0 {
			var ok bool
			if i, ok = s.find(f); !ok {
				return nil, &UnknownFieldError{Message: s.message, Flag: f}
			}
		}
		k, b := uint32(i)>>6, uint64(1)<<(uint32(i)&63)
		if set[k]&b != 0 {
			continue
		}
		set[k] |= b
		fm.n++
		// As mark, for maps being built.
		if e := s.end[i]; e == i+1 {
			cover[k] |= b
		} else {
			fillBits(cover, i, e)
		}
		for p := s.parent[i]; p >= 0 && below[uint32(p)>>6]&(1<<(uint32(p)&63)) == 0; p = s.parent[p] {
			below[uint32(p)>>6] |= 1 << (uint32(p) & 63)
		}
	}
	return fm, nil
}

// initWord is Init for schemas of at most 64 flags: a flag of up to 7
// bytes costs its key, most often one slot of the flag hash, and three
// register operations, and fm is written once.
func (fm *FieldMap) initWord(s *Schema, flags []string) (*FieldMap, error) {
	var set, cover, below uint64
	h := &s.hash
	for _, f := range flags {
		i, _, _ := h.shortFind(f)
		if i < 0 {
			var ok bool
			if i, ok = s.find(f); !ok {
				*fm = FieldMap{}
				return nil, &UnknownFieldError{Message: s.message, Flag: f}
			}
		}
		set |= 1 << (uint32(i) & 63)
		m := &s.marks[i]
		cover |= m.cover
		below |= m.below
	}
	*fm = FieldMap{schema: s, n: int32(bits.OnesCount64(set)), w: 1, inl: [3 * inlineWords]uint64{set, cover, below}}
	return fm, nil
}

// initWords2 is initWord for schemas of 65 to 128 flags, whose bit sets
// are two words each.
func (fm *FieldMap) initWords2(s *Schema, flags []string) (*FieldMap, error) {
	var set, cover, below [2]uint64
	h := &s.hash
	for _, f := range flags {
		i, _, _ := h.shortFind(f)
		if i < 0 {
			var ok bool
			if i, ok = s.find(f); !ok {
				*fm = FieldMap{}
				return nil, &UnknownFieldError{Message: s.message, Flag: f}
			}
		}
		set[uint32(i)>>6&1] |= 1 << (uint32(i) & 63)
		m := &s.marks2[i]
		cover[0] |= m.cover[0]
		cover[1] |= m.cover[1]
		below[0] |= m.below[0]
		below[1] |= m.below[1]
	}
	*fm = FieldMap{schema: s, n: int32(bits.OnesCount64(set[0]) + bits.OnesCount64(set[1])), w: 2,
		inl: [3 * inlineWords]uint64{set[0], set[1], cover[0], cover[1], below[0], below[1]}}
	return fm, nil
}

// NewFieldMap returns an empty FieldMap bound to the schema.
func (s *Schema) NewFieldMap() *FieldMap {
	fm := &FieldMap{}
	fm.init(s)
	return fm
}

// All returns a FieldMap with every leaf flag set.
func (s *Schema) All() *FieldMap {
	fm := s.NewFieldMap()
	for i, f := range s.fields {
		if f.Leaf {
			fm.setID(int32(i), Replace)
		}
	}
	return fm
}
