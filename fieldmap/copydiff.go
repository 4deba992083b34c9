package fieldmap

import (
	"fmt"
	"sync"
	"unsafe"
)

// The table-driven DiffFields: generated methods call Diff with the schema
// of their message, which compares the fields of its shape with the field
// offsets, Ops and Values the generator put in it, without per-message
// code.

// shapeRun is what Diff precomputes for a shape: the schema of every
// top-level message prepares its shape and those below it when it loads
// (Schema.load), before any FieldMap of it exists.
type shapeRun struct {
	once  sync.Once
	flags int32          // flags of the shape's fields, with those below them
	flag  []int32        // by field: the number of its flag from the shape's first flag
	zero  unsafe.Pointer // a zero message, read in place of a nil one
}

// prepare computes the run of s and of the shapes below it, once.
func (s *Shape) prepare() {
	r := &s.run
	r.once.Do(func() {
		r.flag = make([]int32, len(s.Fields))
		for i := range s.Fields {
			if c, ok := s.Fields[i].Value.(checker); ok && !c.check() {
				panic(fmt.Sprintf("fieldmap: the %T of field %d (%s) of a shape has an Eq or Wrapper of the wrong type (%s): regenerate the code", c, s.Fields[i].Number, s.Fields[i].Name, checkDetail(c)))
			}
			r.flag[i] = r.flags
			r.flags++
			if sub := s.Fields[i].Sub; sub != nil {
				sub.prepare()
				r.flags += sub.run.flags
			}
		}
		words := make([]uint64, (s.Size+7)/8+1)
		r.zero = unsafe.Pointer(&words[0])
	})
}

// Diff is the DiffFields of the messages a and b point to, whose schema s
// is: the flags where they differ, with their ancestors. Generated
// DiffFields methods call it; s must have been built from a shape with the
// Go layout of that message.
func Diff(s *Schema, a, b unsafe.Pointer) *FieldMap {
	fm := s.NewFieldMap()
	diffShape(s.shape, a, b, fm, 0)
	return fm
}

// diffShape sets in fm the flags of the fields of shape sh where a and b
// differ, the first flag of the shape being number at of fm's schema, and
// reports whether it set any. A nil message reads as empty.
func diffShape(sh *Shape, a, b unsafe.Pointer, fm *FieldMap, at int) bool {
	r := &sh.run
	if a == nil {
		a = r.zero
	}
	if b == nil {
		b = r.zero
	}
	changed := false
	for i := range sh.Fields {
		f := &sh.Fields[i]
		var differ bool
		switch {
		case f.Op != OpNone:
			differ = !opEqual(f.Op, unsafe.Add(a, f.Off), unsafe.Add(b, f.Off))
		case f.Kind == KindMessage:
			pa := f.Value.present(a)
			differ = pa != f.Value.present(b) ||
				pa && diffShape(f.Sub, f.Value.get(a), f.Value.get(b), fm, at+int(r.flag[i])+1)
		default:
			differ = !f.Value.equal(a, b)
		}
		if differ {
			fm.SetAt(at + int(r.flag[i]))
			changed = true
		}
	}
	return changed
}
