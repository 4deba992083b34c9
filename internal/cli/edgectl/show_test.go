package edgectl_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/internal/cli/edgectl"
	"github.com/edgekit/edgekit/internal/cli/fakecontroller"
)

func seedCloudlets(srv *fakecontroller.Server) {
	srv.Put(&edgeproto.Cloudlet{
		Key: &edgeproto.CloudletKey{Organization: "acme", Name: "edge1"}, PlatformType: "local", CrmOnEdge: true,
		State: edgeproto.TrackedState_TRACKED_STATE_READY, EnvVars: map[string]string{"B": "2", "A": "1"},
		AccessVars: map[string]string{"password": "secret"},
	})
	srv.Put(&edgeproto.Cloudlet{
		Key: &edgeproto.CloudletKey{Organization: "acme", Name: "edge2"}, PlatformType: "fake",
		State: edgeproto.TrackedState_TRACKED_STATE_CREATE_ERROR, Errors: []string{"no capacity", "retry"},
	})
	srv.Put(&edgeproto.Cloudlet{
		Key: &edgeproto.CloudletKey{Organization: "other", Name: "far"}, PlatformType: "fake",
		State: edgeproto.TrackedState_TRACKED_STATE_READY,
	})
}

func TestShowTable(t *testing.T) {
	t.Parallel()
	srv := fakecontroller.Start(t, fakecontroller.Options{})
	seedCloudlets(srv)
	r := run(t, srv, "show", "cloudlets").ok(t)
	const want = `ORGANIZATION  NAME   PLATFORM  CRM_ON_EDGE  STATE         ERRORS
acme          edge1  local     true         READY
acme          edge2  fake      false        CREATE_ERROR  no capacity,retry
other         far    fake      false        READY
`
	if r.out != want {
		t.Errorf("table:\n%s\nwant:\n%s", r.out, want)
	}
	r = run(t, srv, "show", "cl", "--key.organization", "acme", "--state", "ready").ok(t)
	if strings.Count(r.out, "\n") != 2 || !strings.Contains(r.out, "edge1") {
		t.Errorf("filtered table:\n%s", r.out)
	}
	c, _ := srv.LastCall("ShowCloudlets")
	f := c.Request.(*edgeproto.ShowCloudletsRequest).GetFilter()
	if f.GetKey().GetOrganization() != "acme" || f.GetState() != edgeproto.TrackedState_TRACKED_STATE_READY {
		t.Errorf("filter sent: %v", f)
	}
	r = run(t, srv, "show", "cloudlet", "--key.organization", "nobody").ok(t)
	if r.out != "" || r.err != "No cloudlet objects found.\n" {
		t.Errorf("empty result: stdout %q stderr %q", r.out, r.err)
	}
	run(t, srv, "show", "cloudlet", "ghost").fails(t, edgectl.ExitFailure, "Error: NotFound: no cloudlet matches ghost\n")
}

func TestShowJSONAndYAML(t *testing.T) {
	t.Parallel()
	srv := fakecontroller.Start(t, fakecontroller.Options{})
	seedCloudlets(srv)
	r := run(t, srv, "show", "cloudlet", "edge1", "-o", "json").ok(t)
	const wantJSON = `[
  {
    "key": {
      "organization": "acme",
      "name": "edge1"
    },
    "state": "TRACKED_STATE_READY",
    "platform_type": "local",
    "env_vars": {
      "A": "1",
      "B": "2"
    },
    "crm_on_edge": true
  }
]
`
	if r.out != wantJSON {
		t.Errorf("json:\n%s\nwant:\n%s", r.out, wantJSON)
	}
	r = run(t, srv, "show", "cloudlet", "--key.organization", "acme", "-o", "YAML").ok(t)
	const wantYAML = `- crm_on_edge: true
  env_vars:
    A: "1"
    B: "2"
  key:
    name: edge1
    organization: acme
  platform_type: local
  state: TRACKED_STATE_READY
- errors:
  - no capacity
  - retry
  key:
    name: edge2
    organization: acme
  platform_type: fake
  state: TRACKED_STATE_CREATE_ERROR
`
	if r.out != wantYAML {
		t.Errorf("yaml:\n%s\nwant:\n%s", r.out, wantYAML)
	}
	r = run(t, srv, "show", "cloudlet", "--key.organization", "nobody", "-o", "json").ok(t)
	if r.out != "[]\n" {
		t.Errorf("empty json: %q", r.out)
	}
	run(t, srv, "show", "cloudlet", "-o", "xml").fails(t, edgectl.ExitUsage, `unknown output format "xml"`)
}

func TestShowInfoProgress(t *testing.T) {
	t.Parallel()
	srv := fakecontroller.Start(t, fakecontroller.Options{})
	run(t, srv, "create", "cluster", "c1", "--key.organization", "dev").ok(t)
	r := run(t, srv, "show", "clusterinfo").ok(t)
	const want = `ORGANIZATION  NAME  STATE  PROGRESS                           ERRORS
dev           c1    READY  Task 2 of 2: Applying ClusterInst
`
	if r.out != want {
		t.Errorf("table:\n%s\nwant:\n%s", r.out, want)
	}
}

func TestWatch(t *testing.T) {
	t.Parallel()
	srv := fakecontroller.Start(t, fakecontroller.Options{})
	srv.Put(&edgeproto.AppInstInfo{Key: &edgeproto.AppInstKey{Organization: "dev", Name: "a1"}, State: edgeproto.TrackedState_TRACKED_STATE_READY})
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var out syncBuffer
	done := make(chan int, 1)
	go func() {
		done <- edgectl.Execute(ctx, edgectl.Options{Out: &out, ErrOut: &out, Getenv: newEnv(t).getenv},
			[]string{"--addr", srv.Addr, "--insecure", "show", "appinstinfo", "--key.organization", "dev", "--watch"})
	}()
	waitFor(t, &out, "a1                READY")
	srv.Put(&edgeproto.AppInstInfo{Key: &edgeproto.AppInstKey{Organization: "dev", Name: "a2"}, State: edgeproto.TrackedState_TRACKED_STATE_CREATING, Uri: "http://127.0.0.1:1"})
	srv.Put(&edgeproto.AppInstInfo{Key: &edgeproto.AppInstKey{Organization: "other", Name: "x"}})
	waitFor(t, &out, "a2                CREATING")
	cancel()
	select {
	case code := <-done:
		if code != 0 {
			t.Errorf("interrupted watch exited %d:\n%s", code, out.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("watch did not end after its context was cancelled")
	}
	// The columns are as wide as their usual cells from the start: rows
	// of other widths do not move them.
	const want = `EVENT   ORGANIZATION  NAME              STATE                  POWER                PROGRESS                                          URI                       ERRORS
PUT     dev           a1                READY
PUT     dev           a2                CREATING                                                                                      http://127.0.0.1:1
`
	if out.String() != want {
		t.Errorf("watch output:\n%s\nwant:\n%s", out.String(), want)
	}

	// JSON: one event per line, SYNCED included; the watch verb.
	ctx2, cancel2 := context.WithCancel(t.Context())
	defer cancel2()
	var out2 syncBuffer
	go func() {
		done <- edgectl.Execute(ctx2, edgectl.Options{Out: &out2, ErrOut: &out2, Getenv: newEnv(t).getenv},
			[]string{"--addr", srv.Addr, "--insecure", "watch", "appinstinfo", "a1", "-o", "json"})
	}()
	waitFor(t, &out2, `{"type":"EVENT_TYPE_SYNCED"}`)
	cancel2()
	<-done
	const want2 = `{"type":"EVENT_TYPE_PUT","app_inst_info":{"key":{"name":"a1","organization":"dev"},"state":"TRACKED_STATE_READY"}}
{"type":"EVENT_TYPE_SYNCED"}
`
	if out2.String() != want2 {
		t.Errorf("json watch:\n%s\nwant:\n%s", out2.String(), want2)
	}
	run(t, srv, "show", "cloudlet", "--watch").fails(t, edgectl.ExitUsage, "unknown flag: --watch")
	run(t, srv, "watch", "cloudlet").fails(t, edgectl.ExitUsage, `edgectl cannot watch a cloudlet; kinds: cloudletinfo, clusterinstinfo, appinstinfo`)
}

// waitFor polls out until it holds s, for at most 10 seconds.
func waitFor(t *testing.T, out *syncBuffer, s string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(out.String(), s) {
		if time.Now().After(deadline) {
			t.Fatalf("output never held %q:\n%s", s, out.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestSettings(t *testing.T) {
	t.Parallel()
	srv := fakecontroller.Start(t, fakecontroller.Options{})
	r := run(t, srv, "update", "settings", "--max-concurrent-tasks", "4", "--create-cluster-inst-timeout", "5m").ok(t)
	if r.out != "settings updated\n" {
		t.Errorf("stdout %q", r.out)
	}
	c, _ := srv.LastCall("UpdateSettings")
	req := c.Request.(*edgeproto.UpdateSettingsRequest)
	if req.GetSettings().GetCreateClusterInstTimeout().AsDuration() != 5*time.Minute || strings.Join(req.GetFields(), ",") != "1,14" {
		t.Errorf("request %v", req)
	}
	r = run(t, srv, "show", "settings").ok(t)
	for _, want := range []string{"FIELD                         VALUE\n", "create_cluster_inst_timeout   5m0s\n", "max_concurrent_tasks          4\n", "update_cluster_inst_timeout\n"} {
		if !strings.Contains(r.out, want) {
			t.Errorf("settings table lacks %q:\n%s", want, r.out)
		}
	}
	r = run(t, srv, "show", "settings", "-o", "yaml").ok(t)
	if r.out != "create_cluster_inst_timeout: 300s\nmax_concurrent_tasks: 4\n" {
		t.Errorf("settings yaml:\n%s", r.out)
	}
	r = run(t, srv, "reset", "settings", "-o", "json").ok(t)
	if r.out != "{}\n" {
		t.Errorf("after reset: %q", r.out)
	}
	run(t, srv, "show", "settings", "x").fails(t, edgectl.ExitUsage, "unknown command")
}
