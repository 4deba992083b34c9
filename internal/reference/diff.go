package reference

import (
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/edgekit/edgekit/fieldmap"
)

// DiffFields returns the flags where a and b differ (leaves and their
// ancestors), bound to NewSchema of a's descriptor, as docs/field-flags.md
// defines DiffFields. A nil a or b reads as an empty message of the other's
// type; both nil give nil. Unknown fields are not diffed.
func DiffFields(a, b protoreflect.Message) *fieldmap.FieldMap {
	switch {
	case a == nil && b == nil:
		return nil
	case a == nil:
		a = b.Type().Zero()
	case b == nil:
		b = a.Type().Zero()
	}
	in := infoOf(a.Descriptor())
	fm := in.schema.NewFieldMap()
	if a.Descriptor().FullName() == b.Descriptor().FullName() {
		diff(fm, a, b, in.nodes)
	}
	return fm
}

// diff sets in fm the flags of nodes where a and b differ and reports
// whether it set any.
func diff(fm *fieldmap.FieldMap, a, b protoreflect.Message, nodes []*node) bool {
	found := false
	for _, nd := range nodes {
		fd := nd.fd
		differs := false
		if nd.kind == fieldmap.KindMessage {
			ha, hb := has(a, fd), has(b, fd)
			differs = ha != hb || ha && diff(fm, a.Get(fd).Message(), b.Get(fd).Message(), nd.children)
		} else {
			differs = !equalField(a, b, fd)
		}
		if differs {
			fm.Set(nd.flag)
			found = true
		}
	}
	return found
}
