package main_test

import (
	"bytes"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/pluginpb"

	"github.com/edgekit/edgekit/gen"
	"github.com/edgekit/edgekit/internal/plugintest"
)

// plugin builds the plugin binary once per test.
func plugin(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "protoc-gen-go-edgekit")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// TestBinary drives the real plugin process as protoc does: a
// CodeGeneratorRequest on stdin, a CodeGeneratorResponse on stdout.
func TestBinary(t *testing.T) {
	bin := plugin(t)

	// Built from this work tree, the binary is a devel build, whatever
	// version the go command stamps from the checkout.
	out, err := exec.Command(bin, "--version").Output()
	if err != nil || !strings.HasPrefix(string(out), "protoc-gen-go-edgekit "+gen.Devel) {
		t.Fatalf("--version = %q, %v", out, err)
	}
	if err := exec.Command(bin, "extra").Run(); err == nil {
		t.Fatal("an argument other than --version must fail")
	}

	request := func(param string) []byte {
		t.Helper()
		req, err := plugintest.Request([]string{"../../gen/testdata/nested", "../../proto"}, []string{"nested.proto"}, param)
		if err != nil {
			t.Fatal(err)
		}
		in, err := proto.Marshal(req)
		if err != nil {
			t.Fatal(err)
		}
		return in
	}
	run := func(param string) *pluginpb.CodeGeneratorResponse {
		t.Helper()
		cmd := exec.Command(bin)
		cmd.Stdin = bytes.NewReader(request(param))
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("plugin process failed: %v", err)
		}
		resp := &pluginpb.CodeGeneratorResponse{}
		if err := proto.Unmarshal(out, resp); err != nil {
			t.Fatal(err)
		}
		return resp
	}

	resp := run("")
	if resp.Error != nil || len(resp.File) != 1 || resp.File[0].GetName() != "example.com/golden/nested/nested_edgekit.pb.go" {
		t.Fatalf("response: error %q, %d files", resp.GetError(), len(resp.File))
	}
	const features = pluginpb.CodeGeneratorResponse_FEATURE_PROTO3_OPTIONAL | pluginpb.CodeGeneratorResponse_FEATURE_SUPPORTS_EDITIONS
	if resp.GetSupportedFeatures()&uint64(features) != uint64(features) {
		t.Errorf("supported features = %b, want proto3 optional and editions", resp.GetSupportedFeatures())
	}
	if resp.GetMaximumEdition() < 1000 { // EDITION_2023
		t.Errorf("maximum edition = %d", resp.GetMaximumEdition())
	}

	// Every bad parameter is the response's error, naming it in the
	// plugin's words; nothing is generated.
	for _, c := range []struct{ param, want string }{
		{"features=fields+nope", `unknown feature "nope"`},
		{"features=", "features is empty"},
		{"=", `"=" has no name`},
		{",,,", `",,," has an empty entry`},
		{"features=fields,features=clone", "features is given twice"},
		{"bogus=1", `unknown parameter "bogus"`},
	} {
		resp := run(c.param)
		if !strings.Contains(resp.GetError(), "bad plugin parameter: "+c.want) || len(resp.GetFile()) != 0 {
			t.Errorf("parameter %q: error %q, %d files; want %q", c.param, resp.GetError(), len(resp.GetFile()), c.want)
		}
	}
	// A bad value of a protoc-gen-go parameter fails the process, as it
	// does protoc-gen-go, naming the value.
	cmd := exec.Command(bin)
	cmd.Stdin = bytes.NewReader(request("paths=nowhere"))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err == nil || !strings.Contains(stderr.String(), `"nowhere"`) {
		t.Errorf("paths=nowhere: err %v, stderr %q", err, stderr.String())
	}
	if resp := run("features=fields"); resp.Error != nil || strings.Contains(resp.File[0].GetContent(), "func (m *Top) Clone()") {
		t.Errorf("features=fields still generated Clone (error %q)", resp.GetError())
	}
}
