package edgectl_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/testing/protocmp"

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/internal/cli/edgectl"
	"github.com/edgekit/edgekit/internal/cli/fakecontroller"
)

func TestCreateCloudletShowsProgress(t *testing.T) {
	t.Parallel()
	srv := fakecontroller.Start(t, fakecontroller.Options{})
	r := run(t, srv, "create", "cloudlet", "edge1", "--key.organization", "acme", "--platform-type", "fake",
		"--location.latitude", "48.1", "--env-vars", "A=1", "--flavor-names", "small", "--flavor-names", "large",
		"--maintenance-state", "normal-operation").ok(t)
	const want = `CREATE_REQUESTED  Requested create
CREATING  Task 1 of 2: Preparing Cloudlet
CREATING  Task 1 of 2: Preparing Cloudlet, Step: Checking resources
CREATING  Task 2 of 2: Applying Cloudlet
READY  Task 2 of 2: Applying Cloudlet
cloudlet organization=acme,name=edge1 created: READY
`
	if r.out != want {
		t.Errorf("stdout:\n%s\nwant:\n%s", r.out, want)
	}
	if r.err != "" {
		t.Errorf("stderr: %s", r.err)
	}
	c, _ := srv.LastCall("CreateCloudlet")
	got := c.Request.(*edgeproto.CreateCloudletRequest)
	wantReq := &edgeproto.CreateCloudletRequest{Cloudlet: &edgeproto.Cloudlet{
		Key:              &edgeproto.CloudletKey{Organization: "acme", Name: "edge1"},
		PlatformType:     "fake",
		Location:         &edgeproto.Location{Latitude: 48.1},
		EnvVars:          map[string]string{"A": "1"},
		FlavorNames:      []string{"small", "large"},
		MaintenanceState: edgeproto.MaintenanceState_MAINTENANCE_STATE_NORMAL_OPERATION,
	}}
	if diff := cmp.Diff(wantReq, got, protocmp.Transform()); diff != "" {
		t.Errorf("request (-want +got):\n%s", diff)
	}
}

func TestCreateOnTerminalRedrawsOneLine(t *testing.T) {
	t.Parallel()
	srv := fakecontroller.Start(t, fakecontroller.Options{})
	r := runCtx(t.Context(), t, newEnv(t), &edgectl.Terminal{Width: 60}, "",
		"--addr", srv.Addr, "--insecure", "create", "flavor", "small", "--ram-mb", "1024").ok(t)
	if r.out != "flavor name=small created\n" {
		t.Errorf("unary create: %q", r.out)
	}
	r = runCtx(t.Context(), t, newEnv(t), &edgectl.Terminal{Width: 60}, "",
		"--addr", srv.Addr, "--insecure", "create", "cluster", "c1", "--key.organization", "dev",
		"--cloudlet-key.organization", "acme", "--cloudlet-key.name", "edge1", "--flavor-name", "small").ok(t)
	const clr = "\r\x1b[K"
	if strings.Count(r.out, "\n") != 1 || !strings.HasSuffix(r.out, "clusterinst name=c1,organization=dev created: READY (0s)\n") {
		t.Errorf("terminal output is not one redrawn line and a final line: %q", r.out)
	}
	for _, want := range []string{clr + "[0s] CREATE_REQUESTED  Requested create", clr + "[0s] CREATING  Task 1 of 2: Preparing ClusterInst, Step:..."} {
		if !strings.Contains(r.out, want) {
			t.Errorf("terminal output lacks %q: %q", want, r.out)
		}
	}
}

func TestCreateFailureExitsOneWithTheErrors(t *testing.T) {
	t.Parallel()
	srv := fakecontroller.Start(t, fakecontroller.Options{})
	srv.Fail("organization=acme,name=edge1", "no capacity", "try later")
	r := run(t, srv, "create", "cloudlet", "organization=acme,name=edge1", "--platform-type", "fake")
	r.fails(t, edgectl.ExitFailure, "Error: create cloudlet organization=acme,name=edge1: Aborted: create organization=acme,name=edge1: no capacity; try later\n")
	if !strings.HasSuffix(r.out, "CREATE_ERROR  Failed\ncloudlet organization=acme,name=edge1 create failed: CREATE_ERROR\n") {
		t.Errorf("stdout does not end with the error state:\n%s", r.out)
	}
}

func TestCreateCrmOnEdgePrintsTheAccessKeyOnce(t *testing.T) {
	t.Parallel()
	srv := fakecontroller.Start(t, fakecontroller.Options{})
	r := run(t, srv, "create", "cloudlet", "edge2", "--key.organization", "acme", "--platform-type", "local", "--crm-on-edge").ok(t)
	if n := strings.Count(r.out, "access-key-of-edge2"); n != 1 {
		t.Errorf("access key printed %d times:\n%s", n, r.out)
	}
	if !strings.Contains(r.out, "The crm_access_key of cloudlet organization=acme,name=edge2 is shown only this once; keep it safe:\n  crm_access_key: access-key-of-edge2\n") {
		t.Errorf("no clear access key notice:\n%s", r.out)
	}
}

func TestNoWait(t *testing.T) {
	t.Parallel()
	srv := fakecontroller.Start(t, fakecontroller.Options{})
	r := run(t, srv, "create", "appinst", "a1", "--key.organization", "dev", "--app-key.name", "hello", "--no-wait").ok(t)
	const want = "CREATE_REQUESTED  Requested create\n" +
		"appinst name=a1,organization=dev create requested: CREATE_REQUESTED (follow it with: edgectl watch appinstinfo name=a1,organization=dev)\n"
	if r.out != want {
		t.Errorf("stdout:\n%s\nwant:\n%s", r.out, want)
	}
	c, _ := srv.LastCall("CreateAppInst")
	if !c.Request.(*edgeproto.CreateAppInstRequest).GetNoWait() {
		t.Error("no_wait not sent")
	}
}

func TestCreateJSONPrintsEveryResponse(t *testing.T) {
	t.Parallel()
	srv := fakecontroller.Start(t, fakecontroller.Options{})
	r := run(t, srv, "create", "cloudlet", "e", "--key.organization", "o", "-o", "json").ok(t)
	lines := strings.Split(strings.TrimSpace(r.out), "\n")
	if len(lines) != 5 || lines[0] != `{"progress":{"state":"TRACKED_STATE_CREATE_REQUESTED","message":"Requested create"}}` ||
		!strings.Contains(lines[4], `"final":true`) {
		t.Errorf("JSON lines:\n%s", r.out)
	}
	r = run(t, srv, "create", "flavor", "f", "--vcpus", "2", "-o", "yaml").ok(t)
	if r.out != "key:\n  name: f\nvcpus: \"2\"\n" {
		t.Errorf("YAML of a created flavor:\n%s", r.out)
	}
}

func TestCreateFromFile(t *testing.T) {
	t.Parallel()
	srv := fakecontroller.Start(t, fakecontroller.Options{})
	dir := t.TempDir()
	file := filepath.Join(dir, "app.yaml")
	const yaml = `key: {organization: dev, name: hello, version: "1.0"}
deployment: local
imageType: IMAGE_TYPE_NONE
ports:
  - {proto: PORT_PROTOCOL_TCP, internal_port: 8080}
command: /bin/hello
`
	if err := os.WriteFile(file, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	run(t, srv, "create", "app", "-f", file, "--command", "/bin/override", "--args", "-v").ok(t)
	c, _ := srv.LastCall("CreateApp")
	want := &edgeproto.App{
		Key:        &edgeproto.AppKey{Organization: "dev", Name: "hello", Version: "1.0"},
		Deployment: "local",
		ImageType:  edgeproto.ImageType_IMAGE_TYPE_NONE,
		Ports:      []*edgeproto.Port{{Proto: edgeproto.PortProtocol_PORT_PROTOCOL_TCP, InternalPort: 8080}},
		Command:    "/bin/override",
		Args:       []string{"-v"},
	}
	if diff := cmp.Diff(want, c.Request.(*edgeproto.CreateAppRequest).GetApp(), protocmp.Transform()); diff != "" {
		t.Errorf("app (-want +got):\n%s", diff)
	}
	// From standard input, as JSON.
	r := runCtx(t.Context(), t, newEnv(t), nil, `{"key":{"name":"tiny"},"ram_mb":"512"}`, "--addr", srv.Addr, "--insecure", "create", "flavor", "-f", "-").ok(t)
	if r.out != "flavor name=tiny created\n" {
		t.Errorf("stdout %q", r.out)
	}
	// Fields the controller owns are refused before anything is sent.
	owned := filepath.Join(dir, "owned.yaml")
	if err := os.WriteFile(owned, []byte("key: {organization: o, name: n}\nstate: TRACKED_STATE_READY\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	n := len(srv.Calls())
	run(t, srv, "create", "cloudlet", "-f", owned).fails(t, edgectl.ExitUsage, "field state (2) is set by the controller")
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte("key: {organization: o, name: n}\nplatfrom_type: x\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	run(t, srv, "create", "cloudlet", "-f", bad).fails(t, edgectl.ExitUsage, "bad.yaml", "platfrom_type")
	if len(srv.Calls()) != n {
		t.Error("a refused create was sent")
	}
}

func TestUpdateFields(t *testing.T) {
	t.Parallel()
	srv := fakecontroller.Start(t, fakecontroller.Options{})
	run(t, srv, "create", "cloudlet", "edge1", "--key.organization", "acme", "--env-vars", "A=1", "--env-vars", "B=2", "--trust-policy", "tp").ok(t)
	r := run(t, srv, "update", "cloudlet", "organization=acme,name=edge1", "--location.latitude", "5",
		"--flavor-names-add", "x", "--env-vars-remove", "A", "--clear", "trust-policy").ok(t)
	if !strings.HasSuffix(r.out, "cloudlet organization=acme,name=edge1 updated: READY\n") {
		t.Errorf("stdout:\n%s", r.out)
	}
	c, _ := srv.LastCall("UpdateCloudlet")
	req := c.Request.(*edgeproto.UpdateCloudletRequest)
	if want := []string{"5.1", "6:add", "9:remove", "13"}; !slices.Equal(req.GetFields(), want) {
		t.Errorf("fields %v, want %v", req.GetFields(), want)
	}
	stored := srv.Get("edgeproto.v1.Cloudlet", "organization=acme,name=edge1").(*edgeproto.Cloudlet)
	if stored.GetLocation().GetLatitude() != 5 || !slices.Equal(stored.GetFlavorNames(), []string{"x"}) ||
		len(stored.GetEnvVars()) != 1 || stored.GetEnvVars()["B"] != "2" || stored.GetTrustPolicy() != "" {
		t.Errorf("stored after update: %v", stored)
	}

	dir := t.TempDir()
	file := filepath.Join(dir, "update.yaml")
	if err := os.WriteFile(file, []byte("key: {organization: acme, name: edge1}\nlocation: {longitude: 7}\nnum_dynamic_ips: 0\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	run(t, srv, "update", "cloudlet", "-f", file, "--annotations", "a=b").ok(t)
	c, _ = srv.LastCall("UpdateCloudlet")
	if want := []string{"5.2", "15", "19"}; !slices.Equal(c.Request.(*edgeproto.UpdateCloudletRequest).GetFields(), want) {
		t.Errorf("fields from a file %v, want %v", c.Request.(*edgeproto.UpdateCloudletRequest).GetFields(), want)
	}

	n := len(srv.Calls())
	run(t, srv, "update", "cloudlet", "edge1", "--key.organization", "acme").fails(t, edgectl.ExitUsage, "nothing to update")
	run(t, srv, "update", "cloudlet", "edge1", "--platform-type", "x").fails(t, edgectl.ExitUsage, "unknown flag: --platform-type")
	run(t, srv, "update", "cloudlet", "edge1", "--flavor-names", "a", "--flavor-names-add", "b").fails(t, edgectl.ExitUsage, "--flavor-names and --flavor-names-add")
	run(t, srv, "update", "cloudlet", "edge1", "--clear", "nosuch").fails(t, edgectl.ExitUsage, "--clear nosuch")
	run(t, srv, "update", "cloudlet", "edge1", "--clear", "location", "--location.latitude", "1").fails(t, edgectl.ExitUsage, "field location.latitude is also given a value")
	stateFile := filepath.Join(dir, "state.yaml")
	if err := os.WriteFile(stateFile, []byte("key: {organization: acme, name: edge1}\nstate: TRACKED_STATE_READY\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	run(t, srv, "update", "cloudlet", "-f", stateFile).fails(t, edgectl.ExitUsage, "field state (2) is set by the controller")
	run(t, srv, "update", "appinst", "a", "--key.organization", "d", "--annotations-add", "x=y").fails(t, edgectl.ExitUsage, "unknown flag: --annotations-add")
	if len(srv.Calls()) != n {
		t.Error("a refused update was sent")
	}
	run(t, srv, "update", "cloudlet", "nope", "--key.organization", "acme", "--trust-policy", "x").fails(t, edgectl.ExitFailure, "Error: update cloudlet organization=acme,name=nope: NotFound: Cloudlet organization=acme,name=nope not found\n")
}

func TestDelete(t *testing.T) {
	t.Parallel()
	srv := fakecontroller.Start(t, fakecontroller.Options{})
	run(t, srv, "create", "cloudlet", "edge1", "--key.organization", "acme").ok(t)
	r := run(t, srv, "delete", "cloudlet", "edge1", "--key.organization", "acme", "--crm-override", "ignore-crm-errors").ok(t)
	if !strings.HasSuffix(r.out, "DELETE_DONE  Task 2 of 2: Applying Cloudlet\ncloudlet organization=acme,name=edge1 deleted: DELETE_DONE\n") {
		t.Errorf("stdout:\n%s", r.out)
	}
	c, _ := srv.LastCall("DeleteCloudlet")
	want := &edgeproto.DeleteCloudletRequest{Key: &edgeproto.CloudletKey{Organization: "acme", Name: "edge1"}, CrmOverride: edgeproto.CRMOverride_CRM_OVERRIDE_IGNORE_CRM_ERRORS}
	if diff := cmp.Diff(want, c.Request, protocmp.Transform()); diff != "" {
		t.Errorf("request (-want +got):\n%s", diff)
	}
	if srv.Get("edgeproto.v1.Cloudlet", "organization=acme,name=edge1") != nil {
		t.Error("the cloudlet is still there")
	}
	run(t, srv, "delete", "cloudlet", "edge1", "--key.organization", "acme").fails(t, edgectl.ExitFailure, "NotFound")
	run(t, srv, "delete", "cloudlet").fails(t, edgectl.ExitUsage, "which cloudlet?")

	run(t, srv, "create", "flavor", "small").ok(t)
	file := filepath.Join(t.TempDir(), "flavor.json")
	if err := os.WriteFile(file, []byte(`{"key":{"name":"small"},"vcpus":"2"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	r = run(t, srv, "delete", "flavor", "-f", file).ok(t)
	if r.out != "flavor name=small deleted\n" {
		t.Errorf("stdout %q", r.out)
	}
	run(t, srv, "delete", "flavor", "small", "-f", file).fails(t, edgectl.ExitUsage, "give the key once")
}

func TestTimeoutAndInterruptLeaveTheChangeGoing(t *testing.T) {
	t.Parallel()
	srv := fakecontroller.Start(t, fakecontroller.Options{})
	release := srv.Hold("organization=acme,name=slow")
	defer release()
	// The timeout leaves room for the first progress message on a loaded
	// machine: the stdout check below needs it.
	r := run(t, srv, "--timeout", "2s", "create", "cloudlet", "slow", "--key.organization", "acme")
	r.fails(t, edgectl.ExitFailure, "Error: create cloudlet organization=acme,name=slow: no final state within --timeout 2s; the change goes on at the controller "+
		"(follow it with: edgectl watch cloudletinfo organization=acme,name=slow): DeadlineExceeded")
	if !strings.HasSuffix(r.out, "cloudlet organization=acme,name=slow create: stopped waiting at CREATE_REQUESTED\n") {
		t.Errorf("stdout:\n%s", r.out)
	}

	release2 := srv.Hold("organization=acme,name=slow2")
	defer release2()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var out, errOut syncBuffer
	done := make(chan int, 1)
	go func() {
		done <- edgectl.Execute(ctx, edgectl.Options{Out: &out, ErrOut: &errOut, Getenv: newEnv(t).getenv},
			[]string{"--addr", srv.Addr, "--insecure", "create", "cloudlet", "slow2", "--key.organization", "acme"})
	}()
	waitFor(t, &out, "CREATE_REQUESTED  Requested create\n")
	cancel()
	select {
	case code := <-done:
		if code != edgectl.ExitFailure || !strings.Contains(errOut.String(), "create cloudlet organization=acme,name=slow2: interrupted; the change goes on at the controller") {
			t.Errorf("interrupted create: exit %d, stderr %q", code, errOut.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("create did not end when interrupted")
	}
}
