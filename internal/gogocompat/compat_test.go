package gogocompat_test

import (
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gogo/protobuf/gogoproto"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/edgekit/edgekit/internal/gogocompat/edgekitpb"
	"github.com/edgekit/edgekit/internal/gogocompat/gogopb"
	"github.com/edgekit/edgekit/internal/randmsg"
)

const seeds = 200

// toGogo moves m to gogo's side through the wire format.
func toGogo(t *testing.T, m *edgekitpb.Site) *gogopb.Site {
	t.Helper()
	b, err := proto.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	g := &gogopb.Site{}
	if err := g.Unmarshal(b); err != nil {
		t.Fatalf("gogo cannot read %v: %v", m, err)
	}
	return g
}

// fromGogo moves g back through the wire format.
func fromGogo(t *testing.T, g *gogopb.Site) *edgekitpb.Site {
	t.Helper()
	b, err := g.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	m := &edgekitpb.Site{}
	if err := proto.Unmarshal(b, m); err != nil {
		t.Fatal(err)
	}
	return m
}

// gogoBool reads a bool gogoproto field option of fd. The gogoproto
// extensions are not registered with google.golang.org/protobuf, so they
// stay unknown fields of the options.
func gogoBool(fd protoreflect.FieldDescriptor, ext int32) (value, set bool) {
	opts, ok := fd.Options().(*descriptorpb.FieldOptions)
	if !ok {
		return false, false
	}
	b := opts.ProtoReflect().GetUnknown()
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return false, false
		}
		b = b[n:]
		if num == protowire.Number(ext) && typ == protowire.VarintType {
			v, m := protowire.ConsumeVarint(b)
			if m < 0 {
				return false, false
			}
			value, set = v != 0, true
			b = b[m:]
			continue
		}
		m := protowire.ConsumeFieldValue(num, typ, b)
		if m < 0 {
			return false, false
		}
		b = b[m:]
	}
	return value, set
}

func notNullable(fd protoreflect.FieldDescriptor) bool {
	v, set := gogoBool(fd, gogoproto.E_Nullable.Field)
	return set && !v
}

func isStdDuration(fd protoreflect.FieldDescriptor) bool {
	v, _ := gogoBool(fd, gogoproto.E_Stdduration.Field)
	return v
}

// isNegativeZero reports whether v, the value of fd, is a -0 that gogo
// does not write: a singular float or double without presence.
func isNegativeZero(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
	k := fd.Kind()
	return (k == protoreflect.DoubleKind || k == protoreflect.FloatKind) && !fd.IsList() && !fd.IsMap() &&
		!fd.HasPresence() && v.Float() == 0 && math.Signbit(v.Float())
}

func isMessage(fd protoreflect.FieldDescriptor) bool {
	return fd.Kind() == protoreflect.MessageKind || fd.Kind() == protoreflect.GroupKind
}

// representable brings m within what gogo's Go types hold, the way gogo
// itself would read it: a non-nullable message field is always present (an
// unset one reads as empty), a stdduration fits a time.Duration, and a
// singular proto3 float or double is never -0 (gogo's marshaler compares
// with 0 and drops it, where protoc-gen-go's writes it). With
// full it also sets every nullable singular message field outside a oneof,
// so that every field flag has something to select.
func representable(m protoreflect.Message, full bool) {
	fields := m.Descriptor().Fields()
	for i := range fields.Len() {
		fd := fields.Get(i)
		if !fd.IsList() && !fd.IsMap() && isMessage(fd) && !m.Has(fd) &&
			(notNullable(fd) || full && fd.ContainingOneof() == nil) {
			m.Set(fd, m.NewField(fd))
		}
	}
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		switch {
		case fd.IsList() && isMessage(fd):
			for j := range v.List().Len() {
				representable(v.List().Get(j).Message(), full)
			}
		case fd.IsMap() && isMessage(fd.MapValue()):
			v.Map().Range(func(_ protoreflect.MapKey, mv protoreflect.Value) bool {
				representable(mv.Message(), full)
				return true
			})
		case isNegativeZero(fd, v):
			m.Clear(fd)
		case isStdDuration(fd):
			d := v.Message().Interface().(*durationpb.Duration)
			d.Seconds %= math.MaxInt64 / int64(time.Second)
		case isMessage(fd) && !fd.IsList() && !fd.IsMap():
			representable(v.Message(), full)
		}
		return true
	})
}

// randomSite fills a Site from seed, within what gogo represents.
func randomSite(seed uint64, full bool) *edgekitpb.Site {
	m := &edgekitpb.Site{}
	randmsg.Fill(m.ProtoReflect(), randmsg.New(seed), randmsg.Options{UndefinedEnums: true})
	representable(m.ProtoReflect(), full)
	return m
}

// gogoEqual compares gogo's Go values as proto.Equal compares messages: NaN
// equals NaN, times by Equal, and gogo's bookkeeping fields (XXX_sizecache
// and the like) are left out.
var gogoEqual = cmp.Options{
	cmpopts.EquateNaNs(),
	cmp.FilterPath(func(p cmp.Path) bool { return strings.HasPrefix(p.Last().String(), ".XXX_") }, cmp.Ignore()),
}

// TestValuesCross sends random values from protoc-gen-go's side to gogo's
// and back through the wire format, and checks nothing changes on either
// side: the same value back on protoc-gen-go's side, and the same bytes
// from gogo's marshaler for what it read first and what it reads again.
func TestValuesCross(t *testing.T) {
	t.Parallel()
	for seed := range uint64(seeds) {
		m := randomSite(seed, false)
		g := toGogo(t, m)
		back := fromGogo(t, g)
		if !proto.Equal(m, back) {
			t.Fatalf("seed %d: through gogo\n%v\ncame back as\n%v", seed, m, back)
		}
		if diff := cmp.Diff(g, toGogo(t, back), gogoEqual); diff != "" {
			t.Fatalf("seed %d: gogo reads a value that made a round trip differently (-before +after):\n%s", seed, diff)
		}
	}
}

// TestGogoShapes shows the gogoproto options at work on gogo's side with a
// value that crossed: names, embedding, casts and standard Go time types,
// holding what protoc-gen-go's side sent.
func TestGogoShapes(t *testing.T) {
	t.Parallel()
	since := time.Date(2024, 5, 1, 12, 0, 0, 5, time.UTC)
	m := &edgekitpb.Site{
		Key:      &edgekitpb.SiteKey{Organization: "acme", Name: "edge-1"},
		Location: &edgekitpb.Location{Latitude: 48.1, Since: timestamppb.New(since)},
		Power:    edgekitpb.PowerState_POWER_STATE_OFF,
		Flavors:  []*edgekitpb.Resources{{Ram: 4096, Vcpus: 2}},
		Timeout:  durationpb.New(90 * time.Second),
		Platform: &edgekitpb.Site_Vm{Vm: &edgekitpb.Resources{Ram: 512}},
		Cert:     []byte("pem"),
		Status:   &edgekitpb.Status{TaskName: "Creating", Step: 3},
		History:  []*timestamppb.Timestamp{timestamppb.New(since)},
	}
	g := toGogo(t, m)
	want := &gogopb.Site{
		Key:      gogopb.SiteKey{Organization: "acme", SiteName: "edge-1"},
		Location: gogopb.Location{Latitude: 48.1, Since: &since},
		Power:    gogopb.PowerDown,
		Flavors:  []gogopb.Resources{{RAM: gogopb.Megabytes(4096), VCPUs: 2}},
		Timeout:  90 * time.Second,
		Platform: &gogopb.Site_Vm{Vm: &gogopb.Resources{RAM: 512}},
		CertPEM:  []byte("pem"),
		Status:   &gogopb.Status{TaskName: "Creating", Step: 3},
		History:  []time.Time{since},
	}
	if g.TaskName != "Creating" { // promoted from the embedded Status
		t.Errorf("embedded status: %+v", g.Status)
	}
	// jsontag and moretags become struct tags.
	for _, c := range []struct {
		typ         reflect.Type
		field, want string
	}{
		{reflect.TypeFor[gogopb.SiteKey](), "Organization", `json:"org,omitempty"`},
		{reflect.TypeFor[gogopb.SiteKey](), "SiteName", `validate:"required"`},
		{reflect.TypeFor[gogopb.Site](), "Revision", `json:"-"`},
	} {
		if f, ok := c.typ.FieldByName(c.field); !ok || !strings.Contains(string(f.Tag), c.want) {
			t.Errorf("%s.%s tag %q; want it to hold %s", c.typ, c.field, f.Tag, c.want)
		}
	}
	if diff := cmp.Diff(want, g, gogoEqual); diff != "" {
		t.Errorf("gogo reads (-want +got):\n%s", diff)
	}
}

// TestGogoLimits pins the places where a value of protoc-gen-go's side does
// not cross unchanged, which the migration guide names: a non-nullable
// message field cannot be absent on gogo's side (it comes back present and
// empty), a stdduration must fit a time.Duration (gogo refuses the
// message), and gogo drops -0 from a proto3 double.
func TestGogoLimits(t *testing.T) {
	t.Parallel()
	m := &edgekitpb.Site{Power: edgekitpb.PowerState_POWER_STATE_ON}
	back := fromGogo(t, toGogo(t, m))
	if back.Key == nil || back.Location == nil || back.Timeout == nil || !proto.Equal(back.Key, &edgekitpb.SiteKey{}) {
		t.Errorf("absent non-nullable fields came back as %v; want them present and empty", back)
	}
	if back.Quota != nil || back.Status != nil {
		t.Errorf("absent nullable fields came back as %v; want them absent", back)
	}

	negZero := &edgekitpb.Site{Location: &edgekitpb.Location{Latitude: math.Copysign(0, -1)}}
	if back := fromGogo(t, toGogo(t, negZero)); math.Signbit(back.Location.Latitude) {
		t.Errorf("gogo kept -0; the guide says it drops it")
	}

	long := &edgekitpb.Site{Timeout: &durationpb.Duration{Seconds: 400 * 365 * 24 * 3600}}
	b, err := proto.Marshal(long)
	if err != nil {
		t.Fatal(err)
	}
	if err := (&gogopb.Site{}).Unmarshal(b); err == nil || !strings.Contains(err.Error(), "duration") {
		t.Errorf("a 400-year stdduration: gogo error %v; want it refused", err)
	}
}

// flags lists the field flags of gogo's Go type t the way edgekit numbers
// them, from the protobuf struct tags gogo generates: the dot-joined field
// numbers of every field, of the fields of singular and repeated message
// fields below it, and of oneof members (their wrapper types). Map values
// and the standard Go time types have no flags below them, as in edgekit.
func flags(t reflect.Type, prefix string) []string {
	var out []string
	add := func(f reflect.StructField) {
		num := tagNumber(f.Tag.Get("protobuf"))
		flag := prefix + num
		out = append(out, flag)
		ft := f.Type
		if ft.Kind() == reflect.Slice && ft.Elem().Kind() != reflect.Uint8 {
			ft = ft.Elem()
		}
		if ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		if ft.Kind() == reflect.Struct && isGogoMessage(ft) {
			out = append(out, flags(ft, flag+".")...)
		}
	}
	for i := range t.NumField() {
		f := t.Field(i)
		switch {
		case f.Tag.Get("protobuf") != "":
			add(f)
		case f.Tag.Get("protobuf_oneof") != "":
			for _, w := range oneofWrappers(t) {
				add(w.Field(0))
			}
		}
	}
	return out
}

func tagNumber(tag string) string {
	parts := strings.Split(tag, ",")
	if len(parts) < 2 {
		return ""
	}
	return parts[1]
}

func isGogoMessage(t reflect.Type) bool {
	for i := range t.NumField() {
		if t.Field(i).Tag.Get("protobuf") != "" {
			return true
		}
	}
	return false
}

// oneofWrappers returns the wrapper struct types of the oneof members of
// gogo message type t.
func oneofWrappers(t reflect.Type) []reflect.Type {
	ws, ok := reflect.New(t).Interface().(interface{ XXX_OneofWrappers() []any })
	if !ok {
		return nil
	}
	var out []reflect.Type
	for _, w := range ws.XXX_OneofWrappers() {
		out = append(out, reflect.TypeOf(w).Elem())
	}
	return out
}

// TestSameFlags checks that both sides number the same fields alike: the
// flags edgekit generates for Site are exactly those gogo's struct tags
// give.
func TestSameFlags(t *testing.T) {
	t.Parallel()
	var ours []string
	for _, f := range (&edgekitpb.Site{}).FieldSchema().Fields() {
		ours = append(ours, f.Flag)
	}
	theirs := flags(reflect.TypeFor[gogopb.Site](), "")
	slices.Sort(ours)
	slices.Sort(theirs)
	if !slices.Equal(ours, theirs) {
		t.Fatalf("edgekit's flags of Site\n%v\ndiffer from gogo's field numbering\n%v", ours, theirs)
	}
}

// copyFlag copies into dst the field of src that flag selects, walking
// gogo's Go structs by their protobuf tags: the field itself when the flag
// ends there or at a list or map (a unit), else into the sub-message. It is
// what a gogo user's code selecting fields by flag does.
func copyFlag(t *testing.T, dst, src reflect.Value, flag string) {
	t.Helper()
	num, rest, more := strings.Cut(flag, ".")
	for i := range dst.NumField() {
		f := dst.Type().Field(i)
		if f.Tag.Get("protobuf_oneof") != "" {
			if !slices.ContainsFunc(oneofWrappers(dst.Type()), func(w reflect.Type) bool {
				return tagNumber(w.Field(0).Tag.Get("protobuf")) == num
			}) {
				continue // not a member of this oneof
			}
			w := src.Field(i)
			if w.IsNil() || tagNumber(w.Elem().Elem().Type().Field(0).Tag.Get("protobuf")) != num {
				return // src holds another member, or none: nothing to copy
			}
			if !more {
				dst.Field(i).Set(w)
				return
			}
			if dst.Field(i).IsNil() {
				nw := reflect.New(w.Elem().Elem().Type())
				nw.Elem().Field(0).Set(reflect.New(w.Elem().Elem().Field(0).Elem().Type()))
				dst.Field(i).Set(nw)
			}
			copyFlag(t, dst.Field(i).Elem().Elem().Field(0).Elem(), w.Elem().Elem().Field(0).Elem(), rest)
			return
		}
		if tagNumber(f.Tag.Get("protobuf")) != num {
			continue
		}
		d, s := dst.Field(i), src.Field(i)
		switch {
		case !more || s.Kind() == reflect.Slice || s.Kind() == reflect.Map:
			d.Set(s)
		case s.Kind() == reflect.Pointer:
			if s.IsNil() {
				return
			}
			if d.IsNil() {
				d.Set(reflect.New(s.Type().Elem()))
			}
			copyFlag(t, d.Elem(), s.Elem(), rest)
		default:
			copyFlag(t, d, s, rest)
		}
		return
	}
	t.Fatalf("flag %s: gogo's %s has no field numbered %s", flag, dst.Type(), num)
}

// TestFlagsSelectSameFields checks, for every flag of Site, that
// CopyInFields with that flag on protoc-gen-go's side selects what copying
// the field gogo's struct tags name selects on gogo's side: the same value
// on the wire.
func TestFlagsSelectSameFields(t *testing.T) {
	t.Parallel()
	schema := (&edgekitpb.Site{}).FieldSchema()
	for seed := range uint64(seeds / 4) {
		src := randomSite(seed, true)
		gsrc := toGogo(t, src)
		for _, f := range schema.Fields() {
			fm, err := edgekitpb.NewSiteFieldMap(f.Flag)
			if err != nil {
				t.Fatal(err)
			}
			ours := &edgekitpb.Site{}
			ours.CopyInFields(src, fm)
			representable(ours.ProtoReflect(), false)

			theirs := &gogopb.Site{}
			copyFlag(t, reflect.ValueOf(theirs).Elem(), reflect.ValueOf(gsrc).Elem(), f.Flag)
			if got := fromGogo(t, theirs); !proto.Equal(ours, got) {
				t.Fatalf("seed %d, flag %s (%s): CopyInFields selects\n%v\ngogo's field %s selects\n%v",
					seed, f.Flag, f.Path, ours, strconv.Quote(f.Flag), got)
			}
		}
	}
}
