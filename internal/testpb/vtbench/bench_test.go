package vtbench_test

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/fieldmap"
	"github.com/edgekit/edgekit/fluidos"
	"github.com/edgekit/edgekit/internal/randmsg"
	"github.com/edgekit/edgekit/internal/testpb"
	"github.com/edgekit/edgekit/internal/testpb/vtbench/edgeprotovt"
	"github.com/edgekit/edgekit/internal/testpb/vtbench/fluidosvt"
	"github.com/edgekit/edgekit/internal/testpb/vtbench/testpbvt"
)

// Sinks keep benchmark results alive.
var (
	sinkMsg  proto.Message
	sinkBool bool
	sinkInt  int
)

// cloudletInfo is the CloudletInfo of the benchmarks: 5 flavors, 5
// properties, 5 node infos, 3 status messages.
func cloudletInfo() *edgeproto.CloudletInfo {
	m := &edgeproto.CloudletInfo{
		Key:                  &edgeproto.CloudletKey{Organization: "operator", Name: "cloudlet-1"},
		State:                edgeproto.CloudletState_CLOUDLET_STATE_READY,
		Errors:               []string{"e1", "e2"},
		NotifyId:             42,
		Controller:           "ctrl:55001",
		CompatibilityVersion: 3,
		ReleaseVersion:       "v1.2.3",
		Status: &edgeproto.StatusInfo{TaskNumber: 2, MaxTasks: 5, TaskName: "Creating", StepName: "Booting",
			MsgCount: 3, Msgs: []string{"one", "two", "three"}},
		Properties:        map[string]string{},
		ActiveCrmInstance: "crm-a",
		UpdatedAt:         timestamppb.New(timestamppb.Now().AsTime().Truncate(1e9)),
	}
	for i := range 5 {
		n := fmt.Sprint(i)
		m.Flavors = append(m.Flavors, &edgeproto.FlavorInfo{Name: "flavor" + n, Vcpus: uint64(i + 1), RamMb: 1024, DiskGb: 20,
			PropMap: map[string]string{"gpu": "none"}})
		m.Properties["p"+n] = "v" + n
		m.NodeInfos = append(m.NodeInfos, &edgeproto.NodeInfo{Name: "node" + n,
			Allocatable: map[string]string{"cpu": "4"}, Capacity: map[string]string{"cpu": "8"}, Roles: []string{"worker"}})
	}
	return m
}

// filled returns a random message of m's type (seed picked so that it
// holds no NaN, which EqualVT reports unequal to itself, and no -0 in an
// implicit-presence float, which proto.Clone drops) with a K8Slice when m
// is a Flavor.
func filled[T proto.Message](m T, vt proto.Message) T {
	for seed := range uint64(1000) {
		x := m.ProtoReflect().New().Interface().(T)
		randmsg.Fill(x.ProtoReflect(), randmsg.New(seed), randmsg.Options{MaxLen: 4})
		if f, ok := any(x).(*fluidos.Flavor); ok {
			k := &fluidos.K8Slice{}
			randmsg.Fill(k.ProtoReflect(), randmsg.New(seed), randmsg.Options{MaxLen: 4})
			f.Spec = &fluidos.Flavor_K8Slice{K8Slice: k}
		}
		a, b := toVT(x, vt), toVT(x, vt)
		if a.(interface{ EqualMessageVT(proto.Message) bool }).EqualMessageVT(b) && proto.Equal(x, proto.Clone(x)) {
			return x
		}
	}
	panic("no seed gives a message EqualVT accepts")
}

// toVT converts m to the vtbench type of vt through the wire format.
func toVT(m, vt proto.Message) proto.Message {
	b, err := proto.MarshalOptions{Deterministic: true}.Marshal(m)
	if err != nil {
		panic(err)
	}
	out := vt.ProtoReflect().New().Interface()
	if err := proto.Unmarshal(b, out); err != nil {
		panic(err)
	}
	return out
}

// subject is one benchmark message in its three generated forms.
type subject struct {
	name   string
	ours   proto.Message
	vt     proto.Message
	clone  func() proto.Message
	equal  func(proto.Message) bool
	vclone func() proto.Message
	vequal func(proto.Message) bool
}

func subjects() []subject {
	ci := cloudletInfo()
	fl := filled(&fluidos.Flavor{}, &fluidosvt.Flavor{})
	top := filled(&testpb.Top{}, &testpbvt.Top{})
	vci := toVT(ci, &edgeprotovt.CloudletInfo{}).(*edgeprotovt.CloudletInfo)
	vfl := toVT(fl, &fluidosvt.Flavor{}).(*fluidosvt.Flavor)
	vtop := toVT(top, &testpbvt.Top{}).(*testpbvt.Top)
	return []subject{
		{"CloudletInfo", ci, vci,
			func() proto.Message { return ci.Clone() }, func(o proto.Message) bool { return ci.Equal(o.(*edgeproto.CloudletInfo)) },
			func() proto.Message { return vci.CloneVT() }, func(o proto.Message) bool { return vci.EqualVT(o.(*edgeprotovt.CloudletInfo)) }},
		{"Flavor", fl, vfl,
			func() proto.Message { return fl.Clone() }, func(o proto.Message) bool { return fl.Equal(o.(*fluidos.Flavor)) },
			func() proto.Message { return vfl.CloneVT() }, func(o proto.Message) bool { return vfl.EqualVT(o.(*fluidosvt.Flavor)) }},
		{"Top", top, vtop,
			func() proto.Message { return top.Clone() }, func(o proto.Message) bool { return top.Equal(o.(*testpb.Top)) },
			func() proto.Message { return vtop.CloneVT() }, func(o proto.Message) bool { return vtop.EqualVT(o.(*testpbvt.Top)) }},
	}
}

// BenchmarkClone: the generated Clone against vtprotobuf's CloneVT and
// proto.Clone, on the same messages.
func BenchmarkClone(b *testing.B) {
	for _, s := range subjects() {
		b.Run("msg="+s.name+"/impl=edgekit", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				sinkMsg = s.clone()
			}
		})
		b.Run("msg="+s.name+"/impl=vtprotobuf", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				sinkMsg = s.vclone()
			}
		})
		b.Run("msg="+s.name+"/impl=proto.Clone", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				sinkMsg = proto.Clone(s.ours)
			}
		})
	}
}

// BenchmarkEqual compares two equal, separately built copies (every field
// is visited).
func BenchmarkEqual(b *testing.B) {
	for _, s := range subjects() {
		other, vother := proto.Clone(s.ours), s.vclone()
		if !s.equal(other) || !s.vequal(vother) || !proto.Equal(s.ours, other) {
			b.Fatalf("%s: copies are not equal", s.name)
		}
		b.Run("msg="+s.name+"/impl=edgekit", func(b *testing.B) {
			for b.Loop() {
				sinkBool = s.equal(other)
			}
		})
		b.Run("msg="+s.name+"/impl=vtprotobuf", func(b *testing.B) {
			for b.Loop() {
				sinkBool = s.vequal(vother)
			}
		})
		b.Run("msg="+s.name+"/impl=proto.Equal", func(b *testing.B) {
			for b.Loop() {
				sinkBool = proto.Equal(s.ours, other)
			}
		})
	}
}

// maskedFlags are the 4 nested fields of the masked copy.
var maskedFlags = []string{
	edgeproto.CloudletInfoFieldKeyName,
	edgeproto.CloudletInfoFieldStatusTaskName,
	edgeproto.CloudletInfoFieldStatusStepName,
	edgeproto.CloudletInfoFieldStatusMsgCount,
}

// handCopy is the hand-written copy of maskedFlags.
func handCopy(dst, src *edgeproto.CloudletInfo) {
	if dst.Key == nil {
		dst.Key = &edgeproto.CloudletKey{}
	}
	dst.Key.Name = src.GetKey().GetName()
	if dst.Status == nil {
		dst.Status = &edgeproto.StatusInfo{}
	}
	dst.Status.TaskName = src.GetStatus().GetTaskName()
	dst.Status.StepName = src.GetStatus().GetStepName()
	dst.Status.MsgCount = src.GetStatus().GetMsgCount()
}

// BenchmarkMaskedCopy copies 4 nested fields into an existing CloudletInfo:
// the generated CopyInFields with a prebuilt FieldMap and with one built
// from the flag strings in the same call, against a hand-written copy.
// Source and destination alternate, so every call changes the 4 fields.
func BenchmarkMaskedCopy(b *testing.B) {
	x, y := cloudletInfo(), cloudletInfo()
	y.Key.Name, y.Status.TaskName, y.Status.StepName, y.Status.MsgCount = "other", "Updating", "Draining", 9
	fm, err := edgeproto.NewCloudletInfoFieldMap(maskedFlags...)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("impl=edgekit-prebuilt", func(b *testing.B) {
		dst, srcs := x.Clone(), [2]*edgeproto.CloudletInfo{x, y}
		i := 0
		for b.Loop() {
			i ^= 1
			sinkInt = dst.CopyInFields(srcs[i], fm)
		}
	})
	b.Run("impl=edgekit-from-strings", func(b *testing.B) {
		b.ReportAllocs()
		dst, srcs := x.Clone(), [2]*edgeproto.CloudletInfo{x, y}
		i := 0
		for b.Loop() {
			i ^= 1
			fm, _ := edgeproto.NewCloudletInfoFieldMap(maskedFlags...)
			sinkInt = dst.CopyInFields(srcs[i], fm)
		}
	})
	b.Run("impl=handwritten", func(b *testing.B) {
		dst, srcs := x.Clone(), [2]*edgeproto.CloudletInfo{x, y}
		i := 0
		for b.Loop() {
			i ^= 1
			handCopy(dst, srcs[i])
		}
	})
}

// BenchmarkHas queries a prebuilt FieldMap for a directly set flag at
// depths 1 to 3 and for an unset one, against the least a Has of a
// directly set flag can cost when flags are kept as strings (impl=map-lookup:
// one lookup in a Go map of the set flags, the first step of a FieldMap
// that keeps its flags in a map[string]struct{}).
func BenchmarkHas(b *testing.B) {
	set := []string{edgeproto.CloudletInfoFieldState, edgeproto.CloudletInfoFieldStatusTaskName,
		edgeproto.CloudletInfoFieldResourcesSnapshotInfoName}
	fm, err := edgeproto.NewCloudletInfoFieldMap(set...)
	if err != nil {
		b.Fatal(err)
	}
	strs := map[string]struct{}{}
	for _, f := range set {
		strs[f] = struct{}{}
	}
	for _, q := range []struct {
		name, flag string
		want       bool
	}{
		{"depth=1", edgeproto.CloudletInfoFieldState, true},
		{"depth=2", edgeproto.CloudletInfoFieldStatusTaskName, true},
		{"depth=3", edgeproto.CloudletInfoFieldResourcesSnapshotInfoName, true},
		{"unset", edgeproto.CloudletInfoFieldStatusStepName, false},
	} {
		b.Run("flag="+q.name+"/impl=edgekit", func(b *testing.B) {
			for b.Loop() {
				if fm.Has(q.flag) != q.want {
					b.Fatal("wrong answer")
				}
			}
		})
		b.Run("flag="+q.name+"/impl=map-lookup", func(b *testing.B) {
			for b.Loop() {
				if _, ok := strs[q.flag]; ok != q.want {
					b.Fatal("wrong answer")
				}
			}
		})
	}
	b.Run("flag=depth=2/impl=edgekit-unbound", func(b *testing.B) {
		fm := fieldmap.Of(strings.Split("2 11.3 12.1.1", " ")...)
		for b.Loop() {
			if !fm.Has(edgeproto.CloudletInfoFieldStatusTaskName) {
				b.Fatal("wrong answer")
			}
		}
	})
}

// wideMessage returns a random TortureWide without NaN (which the switch
// copy's != counts as a change) and without the recursive field.
func wideMessage(seed uint64) *testpb.TortureWide {
	for try := range uint64(100) {
		m := &testpb.TortureWide{}
		randmsg.Fill(m.ProtoReflect(), randmsg.New(seed+1000*try), randmsg.Options{MaxLen: 4})
		m.Again = nil
		if !hasNaN(m.ProtoReflect()) {
			return m
		}
	}
	panic(fmt.Sprintf("no TortureWide without NaN from seed %d", seed))
}

// hasNaN reports whether a float field of m (not below it) holds a NaN.
func hasNaN(m protoreflect.Message) bool {
	nan := false
	isNaN := func(v protoreflect.Value) bool {
		switch x := v.Interface().(type) {
		case float64:
			return math.IsNaN(x)
		case float32:
			return math.IsNaN(float64(x))
		}
		return false
	}
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		if fd.IsList() {
			for i := range v.List().Len() {
				nan = nan || isNaN(v.List().Get(i))
			}
		} else {
			nan = nan || isNaN(v)
		}
		return !nan
	})
	return nan
}

// BenchmarkMaskedCopyWide copies 111 flags (fields w1 to w111 of
// TortureWide): the generated CopyInFields with the FieldMap built from
// the 111 flag strings in the call and prebuilt, against the per-field
// switch on flag strings (switchCopyWide, generated by switchgen_test.go).
// In case=changed source and destination alternate, so every call copies
// every field (allocating the lists, bytes and optional fields); in
// case=unchanged the destination equals the source, so a call only
// compares.
func BenchmarkMaskedCopyWide(b *testing.B) {
	flags := wideFlagList()
	x, y := wideMessage(1), wideMessage(2)
	fm, err := testpb.NewTortureWideFieldMap(flags...)
	if err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		name string
		srcs [2]*testpb.TortureWide
	}{{"changed", [2]*testpb.TortureWide{x, y}}, {"unchanged", [2]*testpb.TortureWide{x, x}}} {
		b.Run("case="+c.name+"/impl=edgekit-from-strings", func(b *testing.B) {
			b.ReportAllocs()
			dst, i := x.Clone(), 0
			for b.Loop() {
				i ^= 1
				fm, _ := testpb.NewTortureWideFieldMap(flags...)
				sinkInt = dst.CopyInFields(c.srcs[i], fm)
			}
		})
		b.Run("case="+c.name+"/impl=edgekit-prebuilt", func(b *testing.B) {
			b.ReportAllocs()
			dst, i := x.Clone(), 0
			for b.Loop() {
				i ^= 1
				sinkInt = dst.CopyInFields(c.srcs[i], fm)
			}
		})
		b.Run("case="+c.name+"/impl=switch", func(b *testing.B) {
			b.ReportAllocs()
			dst, i := x.Clone(), 0
			for b.Loop() {
				i ^= 1
				sinkInt, _ = switchCopyWide(dst, c.srcs[i], flags)
			}
		})
	}
}
