package reference

import (
	"slices"
	"strconv"
	"sync"

	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/edgekit/edgekit/fieldmap"
)

// node is one flag of a message, with the flags below it.
type node struct {
	fd       protoreflect.FieldDescriptor
	flag     string
	kind     fieldmap.Kind
	children []*node // flags below a KindMessage or a KindList of messages
}

// info is everything this package derives from one top-level message
// descriptor, built once and cached.
type info struct {
	actions bool    // the message enables list actions
	nodes   []*node // the flags of the message's own fields
	fields  []fieldmap.Field
	schema  *fieldmap.Schema
}

// infos caches *info by protoreflect.MessageDescriptor.
var infos sync.Map

// infoOf returns the cached info of md, building it on first use.
func infoOf(md protoreflect.MessageDescriptor) *info {
	if v, ok := infos.Load(md); ok {
		return v.(*info)
	}
	in := &info{actions: listActionsEnabled(md)}
	in.nodes = in.build(md, "", "", false, []protoreflect.FullName{md.FullName()})
	in.schema = fieldmap.NewSchema(string(md.FullName()), in.fields)
	v, _ := infos.LoadOrStore(md, in)
	return v.(*info)
}

// build returns the nodes of the fields of md and appends their Fields in
// flag order. onPath holds the message types from the top-level message
// down to md.
func (in *info) build(md protoreflect.MessageDescriptor, flagPrefix, pathPrefix string, underList bool, onPath []protoreflect.FullName) []*node {
	var nodes []*node
	for _, fd := range sortedFields(md) {
		n := &node{
			fd:   fd,
			flag: flagPrefix + strconv.Itoa(int(fd.Number())),
			kind: fieldmap.KindScalar,
		}
		path := pathPrefix + string(fd.Name())
		switch {
		case fd.IsMap():
			n.kind = fieldmap.KindMap
		case fd.IsList():
			n.kind = fieldmap.KindList
		}
		i := len(in.fields)
		in.fields = append(in.fields, fieldmap.Field{
			Flag:        n.flag,
			Path:        path,
			ListActions: in.actions && (n.kind == fieldmap.KindList || n.kind == fieldmap.KindMap) && !underList,
		})
		if !fd.IsMap() && fd.Message() != nil && expandable(fd, onPath) {
			n.children = in.build(fd.Message(), n.flag+".", path+".",
				underList || fd.IsList(), append(slices.Clip(onPath), fd.Message().FullName()))
			if len(n.children) > 0 && !fd.IsList() {
				n.kind = fieldmap.KindMessage
			}
		}
		in.fields[i].Kind = n.kind
		in.fields[i].Leaf = n.kind != fieldmap.KindMessage && !underList
		nodes = append(nodes, n)
	}
	return nodes
}

// expandable reports whether the message field fd may have flags below it.
func expandable(fd protoreflect.FieldDescriptor, onPath []protoreflect.FullName) bool {
	md := fd.Message()
	return !slices.Contains(onPath, md.FullName()) && !isWellKnown(md) && !isAtomic(fd) && !isOpaque(md)
}

// sortedFields returns the fields of md (not extensions) by field number.
func sortedFields(md protoreflect.MessageDescriptor) []protoreflect.FieldDescriptor {
	fds := md.Fields()
	out := make([]protoreflect.FieldDescriptor, fds.Len())
	for i := range out {
		out[i] = fds.Get(i)
	}
	slices.SortFunc(out, func(a, b protoreflect.FieldDescriptor) int { return int(a.Number()) - int(b.Number()) })
	return out
}

// Schema returns every flag of the message md in flag order (depth first,
// parent before children, children by field number), with Path, Kind, Leaf
// and ListActions set as docs/field-flags.md defines them. The slice is the
// caller's.
func Schema(md protoreflect.MessageDescriptor) []fieldmap.Field {
	return append([]fieldmap.Field{}, infoOf(md).fields...)
}

// NewSchema returns the fieldmap.Schema of md: fieldmap.NewSchema of its
// full name and Schema(md). The result is cached per descriptor and shared.
func NewSchema(md protoreflect.MessageDescriptor) *fieldmap.Schema {
	return infoOf(md).schema
}
