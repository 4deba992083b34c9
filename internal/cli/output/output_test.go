package output_test

import (
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/internal/cli/clitest"
	"github.com/edgekit/edgekit/internal/cli/output"
)

func TestFormatPath(t *testing.T) {
	t.Parallel()
	app := &edgeproto.App{
		Key:         &edgeproto.AppKey{Organization: "dev", Name: "web"},
		ImageType:   edgeproto.ImageType_IMAGE_TYPE_DOCKER,
		Args:        []string{"a", "b"},
		Annotations: map[string]string{"z": "1", "a": "2"},
		Ports:       []*edgeproto.Port{{Proto: edgeproto.PortProtocol_PORT_PROTOCOL_TCP, InternalPort: 80}},
		Trusted:     true,
	}
	s := &edgeproto.Settings{CreateAppInstTimeout: durationpb.New(90_000_000_000)}
	cases := []struct {
		m    proto.Message
		path string
		want string
	}{
		{app, "key.name", "web"},
		{app, "image_type", "DOCKER"},
		{app, "args", "a,b"},
		{app, "annotations", "a=2,z=1"},
		{app, "ports", `{"proto":"PORT_PROTOCOL_TCP","internal_port":80}`},
		{app, "trusted", "true"},
		{app, "created_at", ""},
		{app, "nope", "<no field nope>"},
		{app, "args.x", "<no field args.x>"},
		{&edgeproto.App{}, "key.name", ""},
		{s, "create_app_inst_timeout", "1m30s"},
	}
	for _, c := range cases {
		if got := output.FormatPath(c.m.ProtoReflect(), c.path); got != c.want {
			t.Errorf("FormatPath(%s) = %q, want %q", c.path, got, c.want)
		}
	}
}

func TestWriters(t *testing.T) {
	t.Parallel()
	f := &edgeproto.Flavor{Key: &edgeproto.FlavorKey{Name: "on"}, Vcpus: 2}
	var b strings.Builder
	if err := output.WriteEvent(&b, output.YAML, f); err != nil {
		t.Fatal(err)
	}
	if err := output.WriteEvent(&b, output.JSON, f); err != nil {
		t.Fatal(err)
	}
	const want = "---\nkey:\n  name: \"on\"\nvcpus: \"2\"\n{\"key\":{\"name\":\"on\"},\"vcpus\":\"2\"}\n"
	if b.String() != want {
		t.Errorf("events:\n%q\nwant\n%q", b.String(), want)
	}
	if err := output.WriteOne(&b, output.Table, f); err == nil {
		t.Error("WriteOne as a table did not fail")
	}
	for in, want := range map[string]output.Format{"": output.Table, "JSON": output.JSON, "yaml": output.YAML} {
		if got, err := output.ParseFormat(in); err != nil || got != want {
			t.Errorf("ParseFormat(%q) = %q, %v", in, got, err)
		}
	}
	if _, err := output.ParseFormat("xml"); err == nil || !strings.Contains(err.Error(), `"xml"`) {
		t.Errorf("ParseFormat(xml) = %v", err)
	}
	var tb strings.Builder
	st := output.NewStreamTable(&tb, []output.Column{{Header: "EVENT"}}, []output.Column{{Header: "NAME", Path: "key.name"}, {Header: "VCPUS", Path: "vcpus"}})
	for _, m := range []proto.Message{f, &edgeproto.Flavor{Key: &edgeproto.FlavorKey{Name: "a-much-longer-name"}}} {
		if err := st.Row([]string{"PUT"}, m.ProtoReflect()); err != nil {
			t.Fatal(err)
		}
	}
	// A wider cell widens its column and prints the header again.
	const wantTable = "EVENT  NAME  VCPUS\nPUT    on    2\nEVENT  NAME                VCPUS\nPUT    a-much-longer-name  0\n"
	if tb.String() != wantTable {
		t.Errorf("stream table:\n%s\nwant\n%s", tb.String(), wantTable)
	}
	var wt strings.Builder
	cols := []output.Column{{Header: "NAME", Path: "key.name"}, {Header: "X", Value: func(protoreflect.Message) string { return "" }}}
	if err := output.WriteTable(&wt, cols, []protoreflect.Message{f.ProtoReflect()}); err != nil {
		t.Fatal(err)
	}
	if wt.String() != "NAME  X\non\n" {
		t.Errorf("table: %q", wt.String())
	}
}

// TestStreamTableRowsLineUpWithTheirHeader streams rows of other widths:
// a state changing never moves the columns (an enum column is as wide as
// its longest value from the start), and a wider cell reprints the header,
// so every row lines up with the header above it.
func TestStreamTableRowsLineUpWithTheirHeader(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	st := output.NewStreamTable(&b, []output.Column{{Header: "EVENT", Width: 6}}, []output.Column{
		{Header: "NAME", Path: "key.name"}, {Header: "STATE", Path: "state"}, {Header: "POWER", Path: "power_state"}, {Header: "URI", Path: "uri"},
	})
	info := func(name string, s edgeproto.TrackedState, ps edgeproto.PowerState) proto.Message {
		return &edgeproto.AppInstInfo{Key: &edgeproto.AppInstKey{Organization: "dev", Name: name}, State: s, PowerState: ps, Uri: "127.0.0.1"}
	}
	rows := []struct {
		event string
		m     proto.Message
	}{
		{"PUT", info("a1", edgeproto.TrackedState_TRACKED_STATE_READY, edgeproto.PowerState_POWER_STATE_POWER_ON)},
		{"PUT", info("a1", edgeproto.TrackedState_TRACKED_STATE_CREATE_REQUESTED, edgeproto.PowerState_POWER_STATE_POWER_OFF_REQUESTED)},
		{"DELETE", info("a1", edgeproto.TrackedState_TRACKED_STATE_DELETE_DONE, 0)},
		{"PUT", info("a-longer-name", edgeproto.TrackedState_TRACKED_STATE_UPDATING, edgeproto.PowerState_POWER_STATE_POWER_OFF)},
		{"PUT", info("a2", edgeproto.TrackedState_TRACKED_STATE_READY, 0)},
	}
	for _, r := range rows {
		if err := st.Row([]string{r.event}, r.m.ProtoReflect()); err != nil {
			t.Fatal(err)
		}
	}
	if bad := clitest.Misaligned(b.String(), "EVENT"); bad != "" {
		t.Errorf("%s:\n%s", bad, b.String())
	}
	if n := strings.Count(b.String(), "EVENT"); n != 2 {
		t.Errorf("%d header lines, want 2 (the first, and one before the wider name):\n%s", n, b.String())
	}
}
