package testpb_test

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"

	_ "github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/fieldmap"
	_ "github.com/edgekit/edgekit/fluidos"
	"github.com/edgekit/edgekit/internal/reference"
	"github.com/edgekit/edgekit/internal/testpb"
	optionsv1 "github.com/edgekit/edgekit/proto/edgekit/options/v1"
)

// flagMessages are the proto packages whose messages carry generated
// CopyInFields and DiffFields methods.
var flagMessages = []string{"testpb.", "edgeproto.", "fluidos."}

// flagged adapts the generated CopyInFields and DiffFields methods of one
// message type to proto.Message arguments, through the method set.
type flagged struct {
	mt     protoreflect.MessageType
	typ    reflect.Type // *T
	copyIn reflect.Value
	diff   reflect.Value
}

// flaggedOf returns the adapter of the type of m; it fails the test when
// the type lacks a generated method.
func flaggedOf(t testing.TB, mt protoreflect.MessageType) flagged {
	t.Helper()
	typ := reflect.TypeOf(mt.Zero().Interface())
	c, ok1 := typ.MethodByName("CopyInFields")
	d, ok2 := typ.MethodByName("DiffFields")
	if !ok1 || !ok2 {
		t.Fatalf("%v has no generated CopyInFields or DiffFields method", typ)
	}
	return flagged{mt: mt, typ: typ, copyIn: c.Func, diff: d.Func}
}

// value turns m (possibly a nil interface) into a reflect.Value of f's type.
func (f flagged) value(m proto.Message) reflect.Value {
	if m == nil {
		return reflect.Zero(f.typ)
	}
	return reflect.ValueOf(m)
}

func (f flagged) CopyInFields(dst, src proto.Message, fm *fieldmap.FieldMap) int {
	return int(f.copyIn.Call([]reflect.Value{f.value(dst), f.value(src), reflect.ValueOf(fm)})[0].Int())
}

func (f flagged) DiffFields(a, b proto.Message) *fieldmap.FieldMap {
	return f.diff.Call([]reflect.Value{f.value(a), f.value(b)})[0].Interface().(*fieldmap.FieldMap)
}

// flaggedTypes returns the adapters of every registered message type of
// flagMessages, sorted by name: every one must have the methods.
func flaggedTypes(t testing.TB) []flagged {
	t.Helper()
	var mts []protoreflect.MessageType
	protoregistry.GlobalTypes.RangeMessages(func(mt protoreflect.MessageType) bool {
		name := string(mt.Descriptor().FullName())
		for _, p := range flagMessages {
			if strings.HasPrefix(name, p) && !mt.Descriptor().IsMapEntry() && !skipsFeatures(mt.Descriptor()) {
				mts = append(mts, mt)
				break
			}
		}
		return true
	})
	slices.SortFunc(mts, func(a, b protoreflect.MessageType) int {
		return strings.Compare(string(a.Descriptor().FullName()), string(b.Descriptor().FullName()))
	})
	out := make([]flagged, 0, len(mts))
	for _, mt := range mts {
		out = append(out, flaggedOf(t, mt))
	}
	if len(out) < 20 {
		t.Fatalf("only %d message types registered", len(out))
	}
	return out
}

// fmOf builds an unvalidated FieldMap; a flag may end in ":add" or ":remove".
func fmOf(specs ...string) *fieldmap.FieldMap {
	fm := &fieldmap.FieldMap{}
	for _, s := range specs {
		flag, act, _ := strings.Cut(s, ":")
		switch act {
		case "add":
			fm.SetAction(flag, fieldmap.Add)
		case "remove":
			fm.SetAction(flag, fieldmap.Remove)
		default:
			fm.Set(flag)
		}
	}
	return fm
}

// snapshot deep-copies m with its generated Clone method when it has one:
// proto.Clone drops implicit-presence -0 floats.
func snapshot(m proto.Message) proto.Message {
	if meth := reflect.ValueOf(m).MethodByName("Clone"); meth.IsValid() {
		if c, ok := meth.Call(nil)[0].Interface().(proto.Message); ok {
			return c
		}
	}
	return proto.Clone(m)
}

func leafOf(name string, value int64) *testpb.Leaf { return &testpb.Leaf{Name: name, Value: value} }

// copyCase is one CopyInFields table case: dst.CopyInFields(src, fm) must
// turn dst into want and return count.
type copyCase struct {
	name      string
	dst, src  proto.Message
	fm        *fieldmap.FieldMap
	want      proto.Message
	count     int
	check     func(t *testing.T, dst proto.Message) // extra assertions, optional
	nilSource bool                                  // call with a nil src of dst's type
}

func runCopyCases(t *testing.T, cases []copyCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := flaggedOf(t, tc.dst.ProtoReflect().Type())
			src := tc.src
			if tc.nilSource {
				src = nil
			}
			var srcBefore proto.Message
			if src != nil {
				srcBefore = snapshot(src)
			}
			// The reference agrees on every table case.
			refDst := snapshot(tc.dst)
			var refSrc protoreflect.Message
			if src != nil {
				refSrc = snapshot(src).ProtoReflect()
			}
			refCount := reference.CopyInFields(refDst.ProtoReflect(), refSrc, tc.fm)

			got := f.CopyInFields(tc.dst, src, tc.fm)
			if got != tc.count {
				t.Errorf("count = %d, want %d", got, tc.count)
			}
			if !proto.Equal(tc.dst, tc.want) {
				t.Errorf("dst =\n  %v\nwant\n  %v", tc.dst, tc.want)
			}
			if refCount != tc.count || !proto.Equal(refDst, tc.want) {
				t.Errorf("reference disagrees with the table: count %d, dst %v", refCount, refDst)
			}
			if src != nil && !proto.Equal(src, srcBefore) {
				t.Errorf("src changed: %v", src)
			}
			if tc.check != nil {
				tc.check(t, tc.dst)
			}
			if src != nil {
				checkNoSharing(t, tc.dst, src)
			}
			// Copying again changes nothing.
			if again := f.CopyInFields(tc.dst, src, tc.fm); again != 0 && !hasListAction(tc.fm) {
				t.Errorf("second copy counted %d changes", again)
			}
		})
	}
}

func hasListAction(fm *fieldmap.FieldMap) bool {
	return strings.Contains(fm.String(), ":")
}

func checkNoSharing(t *testing.T, dst, src proto.Message) {
	t.Helper()
	seen := map[uintptr]string{}
	walkRefs(reflect.ValueOf(src), "src", func(p uintptr, path string) { seen[p] = path })
	walkRefs(reflect.ValueOf(dst), "dst", func(p uintptr, path string) {
		if sp, ok := seen[p]; ok {
			t.Errorf("%T: %s shares memory with %s", dst, path, sp)
		}
	})
}

// walkRefs calls fn with the address of every pointer, non-empty slice and
// map reachable from v through exported fields.
func walkRefs(v reflect.Value, path string, fn func(uintptr, string)) {
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			return
		}
		fn(v.Pointer(), path)
		walkRefs(v.Elem(), path, fn)
	case reflect.Interface:
		if !v.IsNil() {
			walkRefs(v.Elem(), path, fn)
		}
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			if v.Type().Field(i).IsExported() {
				walkRefs(v.Field(i), path+"."+v.Type().Field(i).Name, fn)
			}
		}
	case reflect.Slice:
		if v.Len() == 0 {
			return
		}
		fn(v.Pointer(), path)
		for i := 0; i < v.Len(); i++ {
			walkRefs(v.Index(i), fmt.Sprintf("%s[%d]", path, i), fn)
		}
	case reflect.Map:
		if v.IsNil() {
			return
		}
		fn(v.Pointer(), path)
		iter := v.MapRange()
		for iter.Next() {
			walkRefs(iter.Value(), fmt.Sprintf("%s[%v]", path, iter.Key()), fn)
		}
	}
}

// skipsFeatures reports whether the options of md or of its file turn off
// any generated feature: such messages (service requests and responses)
// lack some generated methods by design and are left out of the
// enumerations that expect every method.
func skipsFeatures(md protoreflect.MessageDescriptor) bool {
	if o, ok := md.ParentFile().Options().(*descriptorpb.FileOptions); ok && o != nil {
		if fo, _ := proto.GetExtension(o, optionsv1.E_File).(*optionsv1.FileOptions); len(fo.GetSkipFeatures()) > 0 {
			return true
		}
	}
	if o, ok := md.Options().(*descriptorpb.MessageOptions); ok && o != nil {
		if mo, _ := proto.GetExtension(o, optionsv1.E_Message).(*optionsv1.MessageOptions); len(mo.GetSkipFeatures()) > 0 {
			return true
		}
	}
	return false
}
