package protoflags_test

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/pflag"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/testing/protocmp"

	"github.com/google/go-cmp/cmp"

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/fieldmap"
	"github.com/edgekit/edgekit/internal/cli/protoflags"
	"github.com/edgekit/edgekit/internal/testpb"
)

type schemer interface {
	proto.Message
	FieldSchema() *fieldmap.Schema
}

// parse builds the Set of m's type, registers it on a new FlagSet and
// parses args.
func parse(t *testing.T, m schemer, opts protoflags.Options, args ...string) (*protoflags.Set, error) {
	t.Helper()
	s, err := protoflags.New(m.ProtoReflect().Descriptor(), m.FieldSchema(), opts)
	if err != nil {
		t.Fatal(err)
	}
	fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
	fs.SetOutput(new(strings.Builder))
	if err := s.Register(fs); err != nil {
		t.Fatal(err)
	}
	return s, fs.Parse(args)
}

// sample returns a command-line value for a field and the value it must
// parse to, formatted by FormatScalar (for lists and maps: of the element).
func sample(fd protoreflect.FieldDescriptor) (arg, want string) {
	if fd.IsMap() {
		k, _ := sample(fd.MapKey())
		v, vw := sample(fd.MapValue())
		return k + "=" + v, vw
	}
	switch fd.Kind() {
	case protoreflect.BoolKind:
		return "true", "true"
	case protoreflect.StringKind:
		return "héllo, world", "héllo, world"
	case protoreflect.BytesKind:
		return "aGk=", "aGk="
	case protoreflect.EnumKind:
		v := fd.Enum().Values().Get(1)
		name := protoflags.EnumString(fd.Enum(), v.Number())
		return strings.ToLower(strings.ReplaceAll(name, "_", "-")), name
	case protoreflect.FloatKind, protoreflect.DoubleKind:
		return "2.5", "2.5"
	case protoreflect.MessageKind:
		switch fd.Message().FullName() {
		case "google.protobuf.Duration":
			return "1m30s", "1m30s"
		case "google.protobuf.Timestamp":
			return "2025-01-02T03:04:05Z", "2025-01-02T03:04:05Z"
		case "google.protobuf.StringValue":
			return `"x"`, `"x"`
		case "google.protobuf.Int64Value":
			return `"12"`, `"12"`
		case "google.protobuf.BoolValue":
			return `true`, `true`
		case "google.protobuf.Struct":
			return `{"a":1}`, `{"a":1}`
		case "google.protobuf.Value":
			return `"v"`, `"v"`
		case "google.protobuf.Any":
			return `{"@type":"type.googleapis.com/google.protobuf.Duration","value":"1s"}`,
				`{"@type":"type.googleapis.com/google.protobuf.Duration","value":"1s"}`
		}
		return "{}", "{}"
	}
	return "7", "7"
}

// TestEveryLeafIsSettable sets every leaf of Top, one at a time, and checks
// the message holds the value and Changes names the field's flag.
func TestEveryLeafIsSettable(t *testing.T) {
	t.Parallel()
	for _, m := range []schemer{&testpb.Top{}, &edgeproto.Cloudlet{}, &edgeproto.App{}, &edgeproto.Settings{}, &edgeproto.ClusterInst{}} {
		all, err := protoflags.New(m.ProtoReflect().Descriptor(), m.FieldSchema(), protoflags.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if got, want := len(all.Fields()), len(m.FieldSchema().Leaves()); got != want {
			t.Errorf("%T: %d flags, want one per leaf (%d)", m, got, want)
		}
		for _, f := range all.Fields() {
			arg, want := sample(f.Desc())
			s, err := parse(t, m, protoflags.Options{}, "--"+f.Name, arg)
			if err != nil {
				t.Errorf("--%s %s: %v", f.Name, arg, err)
				continue
			}
			got := m.ProtoReflect().New()
			if err := s.Apply(got); err != nil {
				t.Fatal(err)
			}
			if s := readBack(got, f.Descs); s != want {
				t.Errorf("--%s %s: field holds %q, want %q", f.Name, arg, s, want)
			}
			changes, err := s.Changes()
			if err != nil || len(changes) != 1 || changes[0].FieldFlag() != f.Flag {
				t.Errorf("--%s: changes %v, %v; want the flag %s", f.Name, changes, err, f.Flag)
			}
		}
	}
}

// readBack formats the value at a path: a list or map by its only element.
func readBack(m protoreflect.Message, descs []protoreflect.FieldDescriptor) string {
	for _, fd := range descs[:len(descs)-1] {
		if !m.Has(fd) {
			return "<unset " + string(fd.Name()) + ">"
		}
		m = m.Get(fd).Message()
	}
	fd := descs[len(descs)-1]
	v := m.Get(fd)
	switch {
	case fd.IsList():
		if v.List().Len() != 1 {
			return fmt.Sprintf("<%d elements>", v.List().Len())
		}
		return protoflags.FormatScalar(fd, v.List().Get(0))
	case fd.IsMap():
		var out string
		v.Map().Range(func(_ protoreflect.MapKey, e protoreflect.Value) bool {
			out = protoflags.FormatScalar(fd.MapValue(), e)
			return true
		})
		return out
	}
	if !m.Has(fd) && fd.Kind() != protoreflect.MessageKind {
		return "<unset>"
	}
	return protoflags.FormatScalar(fd, v)
}

func TestFlagNames(t *testing.T) {
	t.Parallel()
	s, err := protoflags.New((&edgeproto.ClusterInst{}).ProtoReflect().Descriptor(), (&edgeproto.ClusterInst{}).FieldSchema(), protoflags.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range s.Fields() {
		names = append(names, f.Name)
	}
	for _, want := range []string{"key.name", "key.organization", "cloudlet-key.organization", "flavor-name", "node-pools", "infra-annotations", "created-at"} {
		if !slices.Contains(names, want) {
			t.Errorf("no flag --%s in %v", want, names)
		}
	}
	if f, ok := s.Lookup("cloudlet_key.organization"); !ok || f.Flag != edgeproto.ClusterInstFieldCloudletKeyOrganization {
		t.Errorf("Lookup by proto path: %v %v", f, ok)
	}
}

func TestValues(t *testing.T) {
	t.Parallel()
	s, err := parse(t, &edgeproto.App{}, protoflags.Options{},
		"--key.organization", "dev", "--key.name=hello",
		"--image-type", "Docker",
		"--health-check", "HEALTH_CHECK_HTTP",
		"--args", "a,b", "--args", "c",
		"--annotations", "team=edge", "--annotations", "eq=a=b",
		"--ports", `{"proto":"PORT_PROTOCOL_TCP","internal_port":80}`,
		"--ports", `[{"proto":"PORT_PROTOCOL_UDP","internalPort":53},{"internal_port":8080,"tls":true}]`,
		"--trusted",
	)
	if err != nil {
		t.Fatal(err)
	}
	got := &edgeproto.App{}
	if err := s.Apply(got.ProtoReflect()); err != nil {
		t.Fatal(err)
	}
	want := &edgeproto.App{
		Key:         &edgeproto.AppKey{Organization: "dev", Name: "hello"},
		ImageType:   edgeproto.ImageType_IMAGE_TYPE_DOCKER,
		HealthCheck: edgeproto.HealthCheck_HEALTH_CHECK_HTTP,
		Args:        []string{"a,b", "c"},
		Annotations: map[string]string{"team": "edge", "eq": "a=b"},
		Ports: []*edgeproto.Port{
			{Proto: edgeproto.PortProtocol_PORT_PROTOCOL_TCP, InternalPort: 80},
			{Proto: edgeproto.PortProtocol_PORT_PROTOCOL_UDP, InternalPort: 53},
			{InternalPort: 8080, Tls: true},
		},
		Trusted: true,
	}
	if diff := cmp.Diff(want, got, protocmp.Transform()); diff != "" {
		t.Errorf("applied message (-want +got):\n%s", diff)
	}
}

func TestApplyReplacesWhatTheMessageHeld(t *testing.T) {
	t.Parallel()
	s, err := parse(t, &edgeproto.Cloudlet{}, protoflags.Options{}, "--flavor-names", "x", "--env-vars", "A=1", "--location.latitude", "3")
	if err != nil {
		t.Fatal(err)
	}
	got := &edgeproto.Cloudlet{
		FlavorNames:  []string{"from-file"},
		EnvVars:      map[string]string{"B": "2"},
		Location:     &edgeproto.Location{Longitude: 4},
		PhysicalName: "kept",
	}
	if err := s.Apply(got.ProtoReflect()); err != nil {
		t.Fatal(err)
	}
	want := &edgeproto.Cloudlet{
		FlavorNames:  []string{"x"},
		EnvVars:      map[string]string{"A": "1"},
		Location:     &edgeproto.Location{Latitude: 3, Longitude: 4},
		PhysicalName: "kept",
	}
	if diff := cmp.Diff(want, got, protocmp.Transform()); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestBadValuesNameTheFlagAndTheValue(t *testing.T) {
	t.Parallel()
	cases := []struct {
		args []string
		want []string
	}{
		{[]string{"--scalars.f-int32", "abc"}, []string{`"abc"`, "--scalars.f-int32", "32-bit integer"}},
		{[]string{"--scalars.f-int32", "99999999999"}, []string{"--scalars.f-int32", "out of range"}},
		{[]string{"--scalars.f-uint64", "-1"}, []string{"--scalars.f-uint64", "unsigned"}},
		{[]string{"--scalars.f-bool", "--scalars.f-bool=maybe"}, []string{"--scalars.f-bool", "true or false"}},
		{[]string{"--middle.leaf.state", "bogus"}, []string{`"bogus"`, "--middle.leaf.state", "UNSPECIFIED, ON, OFF"}},
		{[]string{"--labels", "novalue"}, []string{"--labels", "key=value"}},
		{[]string{"--leaf-map", "x=1"}, []string{"--leaf-map", `key "x"`}},
		{[]string{"--middles", `{"nope":1}`}, []string{"--middles", "nope"}},
		{[]string{"--middles", `[{"name":"a"},{"name":5}]`}, []string{"--middles", "element 1"}},
		{[]string{"--wkt.dur", "5 minutes"}, []string{"--wkt.dur", "duration"}},
		{[]string{"--wkt.ts", "yesterday"}, []string{"--wkt.ts", "RFC 3339"}},
		{[]string{"--scalars.f-bytes", "!!"}, []string{"--scalars.f-bytes", "base64"}},
		{[]string{"--scalars.f-string", "\xff"}, []string{"--scalars.f-string", "UTF-8"}},
		{[]string{"--no-such-field", "1"}, []string{"--no-such-field"}},
	}
	for _, c := range cases {
		_, err := parse(t, &testpb.Top{}, protoflags.Options{}, c.args...)
		if err == nil {
			t.Errorf("%q: no error", c.args)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%q: error %q does not contain %q", c.args, err, w)
			}
		}
	}
}

func TestEnumSpellings(t *testing.T) {
	t.Parallel()
	ed := edgeproto.MaintenanceState(0).Descriptor()
	for _, in := range []string{"normal-operation", "NORMAL_OPERATION", "Normal_Operation", "MAINTENANCE_STATE_NORMAL_OPERATION", "maintenance-state-normal-operation", "1"} {
		n, err := protoflags.ParseEnum(ed, in)
		if err != nil || n != 1 {
			t.Errorf("ParseEnum(%q) = %d, %v; want 1", in, n, err)
		}
	}
	if _, err := protoflags.ParseEnum(ed, "99"); err == nil {
		t.Error("ParseEnum(99): an undefined number was accepted")
	}
	if got := protoflags.EnumPrefix(edgeproto.TrackedState(0).Descriptor()); got != "TRACKED_STATE_" {
		t.Errorf("EnumPrefix(TrackedState) = %q", got)
	}
	if got := protoflags.EnumString(edgeproto.TrackedState(0).Descriptor(), 5); got != "READY" {
		t.Errorf("EnumString(READY) = %q", got)
	}
	if got := protoflags.EnumString(edgeproto.TrackedState(0).Descriptor(), 99); got != "99" {
		t.Errorf("EnumString(99) = %q", got)
	}
}

func TestListActions(t *testing.T) {
	t.Parallel()
	opts := protoflags.Options{ListActions: true}
	s, err := parse(t, &testpb.Top{}, opts, "--tags-add", "a", "--tags-add", "b", "--labels-remove", "gone", "--middles-remove", `{"name":"m"}`, "--key.name", "k")
	if err != nil {
		t.Fatal(err)
	}
	changes, err := s.Changes()
	if err != nil {
		t.Fatal(err)
	}
	var flags []string
	for _, c := range changes {
		flags = append(flags, c.FieldFlag())
	}
	if want := []string{"1.2", "3:add", "4:remove", "5:remove"}; !slices.Equal(flags, want) {
		t.Errorf("fields %v, want %v", flags, want)
	}
	got := &testpb.Top{}
	if err := s.Apply(got.ProtoReflect()); err != nil {
		t.Fatal(err)
	}
	want := &testpb.Top{
		Key:     &testpb.Key{Name: "k"},
		Tags:    []string{"a", "b"},
		Labels:  map[string]string{"gone": ""},
		Middles: []*testpb.Middle{{Name: "m"}},
	}
	if diff := cmp.Diff(want, got, protocmp.Transform()); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}

	s, err = parse(t, &testpb.Top{}, opts, "--tags", "x", "--tags-remove", "y")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Changes(); !errors.Is(err, protoflags.ErrConflict) || !strings.Contains(err.Error(), "--tags and --tags-remove") {
		t.Errorf("replace and remove of one list: %v, want a conflict naming both flags", err)
	}
	if err := s.Apply((&testpb.Top{}).ProtoReflect()); !errors.Is(err, protoflags.ErrConflict) {
		t.Errorf("Apply with a conflict: %v", err)
	}

	// Without ListActions, or on a message without list actions, no -add flag.
	if _, err := parse(t, &testpb.Top{}, protoflags.Options{}, "--tags-add", "a"); err == nil {
		t.Error("--tags-add accepted without Options.ListActions")
	}
	if _, err := parse(t, &edgeproto.AppInst{}, opts, "--annotations-add", "a=b"); err == nil {
		t.Error("--annotations-add accepted on AppInst, whose message has no list actions")
	}
}

func TestOneofConflict(t *testing.T) {
	t.Parallel()
	s, err := parse(t, &testpb.Top{}, protoflags.Options{}, "--choice-name", "n", "--choice-leaf.name", "l")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Changes(); !errors.Is(err, protoflags.ErrConflict) || !strings.Contains(err.Error(), "oneof choice") {
		t.Errorf("two members of a oneof: %v, want a conflict naming the oneof", err)
	}
	s, err = parse(t, &testpb.Top{}, protoflags.Options{}, "--choice-leaf.name", "l", "--choice-leaf.value", "2")
	if err != nil {
		t.Fatal(err)
	}
	got := &testpb.Top{}
	if err := s.Apply(got.ProtoReflect()); err != nil {
		t.Fatalf("two fields of one oneof member: %v", err)
	}
	if got.GetChoiceLeaf().GetName() != "l" || got.GetChoiceLeaf().GetValue() != 2 {
		t.Errorf("got %v", got)
	}
}

func TestIncludeAndRegisterClash(t *testing.T) {
	t.Parallel()
	m := &edgeproto.Cloudlet{}
	s, err := protoflags.New(m.ProtoReflect().Descriptor(), m.FieldSchema(), protoflags.Options{
		Include: func(f *protoflags.Field) bool { return !strings.HasPrefix(f.Path, "config.") },
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := s.Lookup("config.region"); ok {
		t.Error("excluded field has a flag")
	}
	fs := pflag.NewFlagSet("x", pflag.ContinueOnError)
	fs.String("platform-type", "", "")
	if err := s.Register(fs); err == nil || !strings.Contains(err.Error(), "--platform-type") {
		t.Errorf("Register over a defined flag: %v, want an error naming --platform-type", err)
	}
	if _, err := protoflags.New(m.ProtoReflect().Descriptor(), (&edgeproto.App{}).FieldSchema(), protoflags.Options{}); err == nil {
		t.Error("New with another message's schema succeeded")
	}
	if err := s.Set("physical_name", "p"); err != nil {
		t.Errorf("Set by proto path: %v", err)
	}
	if err := s.Set("num-dynamic-ips", "x"); err == nil || !strings.Contains(err.Error(), "num-dynamic-ips") {
		t.Errorf("Set of a bad value: %v", err)
	}
}

func TestFieldsInJSON(t *testing.T) {
	t.Parallel()
	m := &testpb.Top{}
	md, schema := m.ProtoReflect().Descriptor(), m.FieldSchema()
	got, err := protoflags.FieldsInJSON(md, schema, []byte(`{
		"key": {"name": "x", "sub": {"zone": "0"}},
		"tags": [],
		"middle": {},
		"scalars": {"fInt32": 0, "f_string": null},
		"atomic_leaf": {"name": "whole"},
		"wkt": {"dur": "1s"},
		"labels": {"a": "b"}
	}`))
	if err != nil {
		t.Fatal(err)
	}
	slices.SortFunc(got, fieldmap.CompareFlags)
	want := []string{"1.2", "1.5.2", "2", "3", "5", "16.3", "16.14", "18.2", "22"}
	if !slices.Equal(got, want) {
		t.Errorf("flags %v, want %v", got, want)
	}
	if _, err := protoflags.FieldsInJSON(md, schema, []byte(`{"middle":{"nope":1}}`)); err == nil || !strings.Contains(err.Error(), "middle.nope") {
		t.Errorf("unknown nested field: %v, want an error naming middle.nope", err)
	}
	if _, err := protoflags.FieldsInJSON(md, schema, []byte(`[1]`)); err == nil {
		t.Error("a JSON array was accepted")
	}
}

func TestFormat(t *testing.T) {
	t.Parallel()
	m := &testpb.Top{Wkt: &testpb.Wkt{}, Middle: &testpb.Middle{Name: "a", Leaf: &testpb.Leaf{State: testpb.State_STATE_ON}}}
	fd := m.ProtoReflect().Descriptor().Fields().ByName("middle")
	if got, want := protoflags.FormatScalar(fd, m.ProtoReflect().Get(fd)), `{"name":"a","leaf":{"state":"STATE_ON"}}`; got != want {
		t.Errorf("FormatScalar(middle) = %s, want %s", got, want)
	}
}
