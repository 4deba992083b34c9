package reference

import (
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/edgekit/edgekit/fieldmap"
)

// CopyInFields copies the fields of src flagged in fm into dst and returns
// how many fields changed, as docs/field-flags.md defines CopyInFields.
//
// A nil or invalid src reads as an empty message; a nil or invalid
// (read-only) dst, or a src of another message type, does nothing and
// returns 0. List actions of fm are honoured only when the message enables
// them. After the call dst shares no pointer, slice or map with src.
func CopyInFields(dst, src protoreflect.Message, fm *fieldmap.FieldMap) int {
	if dst == nil || !dst.IsValid() || fm.Count() == 0 {
		return 0
	}
	md := dst.Descriptor()
	if src == nil {
		src = dst.Type().Zero()
	} else if src.Descriptor().FullName() != md.FullName() {
		return 0
	}
	in := infoOf(md)
	c := copier{fm: fm, actions: in.actions}
	return c.fields(dst, src, in.nodes)
}

// copier carries what every level of one CopyInFields call needs.
type copier struct {
	fm      *fieldmap.FieldMap
	actions bool
}

// fields applies the flags of nodes (the fields of one message, by number)
// from src to dst and returns the number of fields changed.
func (c copier) fields(dst, src protoreflect.Message, nodes []*node) int {
	n := 0
	for _, nd := range nodes {
		fd := nd.fd
		switch nd.kind {
		case fieldmap.KindScalar:
			if c.fm.Has(nd.flag) {
				n += copyUnit(dst, src, fd)
			}
		case fieldmap.KindList, fieldmap.KindMap:
			if !c.fm.HasOrHasChild(nd.flag) {
				continue
			}
			act := fieldmap.Replace
			if c.actions {
				act = c.fm.ListAction(nd.flag)
			}
			switch {
			case act == fieldmap.Replace:
				n += copyUnit(dst, src, fd)
			case fd.IsMap():
				n += mapAction(dst, src, fd, act)
			default:
				n += listAction(dst, src, fd, act)
			}
		case fieldmap.KindMessage:
			switch {
			case c.fm.Has(nd.flag):
				n += copyUnit(dst, src, fd)
			case c.fm.HasOrHasChild(nd.flag):
				if !dst.Has(fd) {
					if !has(src, fd) {
						continue
					}
					dst.Mutable(fd) // a new empty sub-message (replaces another oneof member)
					n++
				}
				n += c.fields(dst.Mutable(fd).Message(), src.Get(fd).Message(), nd.children)
			}
		}
	}
	return n
}

// copyUnit makes field fd of dst a deep copy of field fd of src, presence
// included, and returns 1 when that changed dst (see sameField).
func copyUnit(dst, src protoreflect.Message, fd protoreflect.FieldDescriptor) int {
	if sameField(dst, src, fd) {
		return 0
	}
	if has(src, fd) {
		dst.Set(fd, cloneValue(dst, fd, src.Get(fd)))
	} else {
		dst.Clear(fd)
	}
	return 1
}

// listAction applies the Add or Remove action to list field fd.
func listAction(dst, src protoreflect.Message, fd protoreflect.FieldDescriptor, act fieldmap.Action) int {
	sl, dl := src.Get(fd).List(), dst.Get(fd).List()
	switch act {
	case fieldmap.Add:
		var add []protoreflect.Value
		for i := 0; i < sl.Len(); i++ {
			e := sl.Get(i)
			if !listContains(dl, e) && !sliceContains(add, e) {
				add = append(add, e)
			}
		}
		if len(add) == 0 {
			return 0
		}
		ml := dst.Mutable(fd).List()
		for _, e := range add {
			ml.Append(cloneSingular(fd, e, ml.NewElement))
		}
		return 1
	case fieldmap.Remove:
		var keep []protoreflect.Value
		for i := 0; i < dl.Len(); i++ {
			if e := dl.Get(i); !listContains(sl, e) {
				keep = append(keep, e)
			}
		}
		if len(keep) == dl.Len() {
			return 0
		}
		if len(keep) == 0 {
			dst.Clear(fd)
			return 1
		}
		nl := dst.NewField(fd).List()
		for _, e := range keep {
			nl.Append(e) // dst's own elements: no sharing with src
		}
		dst.Set(fd, protoreflect.ValueOfList(nl))
		return 1
	}
	return 0
}

// mapAction applies the Add or Remove action to map field fd.
func mapAction(dst, src protoreflect.Message, fd protoreflect.FieldDescriptor, act fieldmap.Action) int {
	sm, dm := src.Get(fd).Map(), dst.Get(fd).Map()
	changed := false
	switch act {
	case fieldmap.Add:
		var mm protoreflect.Map
		sm.Range(func(k protoreflect.MapKey, v protoreflect.Value) bool {
			if dm.Has(k) && dm.Get(k).Equal(v) {
				return true
			}
			if mm == nil {
				mm = dst.Mutable(fd).Map()
			}
			mm.Set(k, cloneSingular(fd.MapValue(), v, mm.NewValue))
			changed = true
			return true
		})
	case fieldmap.Remove:
		var del []protoreflect.MapKey
		sm.Range(func(k protoreflect.MapKey, _ protoreflect.Value) bool {
			if dm.Has(k) {
				del = append(del, k)
			}
			return true
		})
		if len(del) == 0 {
			break
		}
		changed = true
		if len(del) == dm.Len() {
			dst.Clear(fd)
			break
		}
		mm := dst.Mutable(fd).Map()
		for _, k := range del {
			mm.Clear(k)
		}
	}
	if changed {
		return 1
	}
	return 0
}

// listContains reports whether l holds an element equal to e (Equal rules).
func listContains(l protoreflect.List, e protoreflect.Value) bool {
	for i := 0; i < l.Len(); i++ {
		if l.Get(i).Equal(e) {
			return true
		}
	}
	return false
}

// sliceContains reports whether s holds an element equal to e (Equal rules).
func sliceContains(s []protoreflect.Value, e protoreflect.Value) bool {
	for _, x := range s {
		if x.Equal(e) {
			return true
		}
	}
	return false
}

// cloneValue returns a deep copy of v, a value of field fd, made for dst.
func cloneValue(dst protoreflect.Message, fd protoreflect.FieldDescriptor, v protoreflect.Value) protoreflect.Value {
	switch {
	case fd.IsList():
		sl := v.List()
		nl := dst.NewField(fd).List()
		for i := 0; i < sl.Len(); i++ {
			nl.Append(cloneSingular(fd, sl.Get(i), nl.NewElement))
		}
		return protoreflect.ValueOfList(nl)
	case fd.IsMap():
		nm := dst.NewField(fd).Map()
		v.Map().Range(func(k protoreflect.MapKey, mv protoreflect.Value) bool {
			nm.Set(k, cloneSingular(fd.MapValue(), mv, nm.NewValue))
			return true
		})
		return protoreflect.ValueOfMap(nm)
	}
	return cloneSingular(fd, v, func() protoreflect.Value { return dst.NewField(fd) })
}

// cloneSingular deep-copies one scalar or message value of field fd; newMsg
// returns a new empty message value of the right type.
func cloneSingular(fd protoreflect.FieldDescriptor, v protoreflect.Value, newMsg func() protoreflect.Value) protoreflect.Value {
	switch fd.Kind() {
	case protoreflect.BytesKind:
		return protoreflect.ValueOfBytes(append([]byte{}, v.Bytes()...))
	case protoreflect.MessageKind, protoreflect.GroupKind:
		nv := newMsg()
		copyMessage(nv.Message(), v.Message())
		return nv
	}
	return v
}
