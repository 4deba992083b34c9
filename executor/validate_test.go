package executor_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/executor"
	"github.com/edgekit/edgekit/platforms/fake"
)

// TestSubmitRejectsBadKeys: a create or update whose key breaks the limits
// is refused at Submit with a short error naming the field; nothing is
// queued and the platform is never called.
func TestSubmitRejectsBadKeys(t *testing.T) {
	t.Parallel()
	huge := strings.Repeat("x", 10000)
	create := edgeproto.TrackedState_TRACKED_STATE_CREATE_REQUESTED
	withCluster := func(edit func(ci *edgeproto.ClusterInst)) *edgeproto.ClusterInst {
		ci := cluster("c1", create)
		edit(ci)
		return ci
	}
	for _, tc := range []struct {
		name  string
		obj   protoMsg
		field string
	}{
		{"empty cluster name", withCluster(func(ci *edgeproto.ClusterInst) { ci.Key.Name = "" }), "ClusterInst.key.name is empty"},
		{"huge cluster name", withCluster(func(ci *edgeproto.ClusterInst) { ci.Key.Name = huge }), "ClusterInst.key.name is 10000 bytes long"},
		{"control character", withCluster(func(ci *edgeproto.ClusterInst) { ci.Key.Organization = "dev\x00" }), "ClusterInst.key.organization holds the control character U+0000"},
		{"invalid UTF-8", withCluster(func(ci *edgeproto.ClusterInst) { ci.Key.Name = "\xff" }), "ClusterInst.key.name is not valid UTF-8"},
		{"empty cloudlet key of a cluster", withCluster(func(ci *edgeproto.ClusterInst) { ci.CloudletKey = &edgeproto.CloudletKey{} }), "ClusterInst.cloudlet_key.organization is empty"},
		{"empty cloudlet key", &edgeproto.Cloudlet{Key: &edgeproto.CloudletKey{}, State: create}, "Cloudlet.key.organization is empty"},
		{"app instance without app", &edgeproto.AppInst{Key: &edgeproto.AppInstKey{Organization: "dev", Name: "i"}, ClusterKey: clusterKey("c1"),
			CloudletKey: cloudletKey.Clone(), State: edgeproto.TrackedState_TRACKED_STATE_UPDATE_REQUESTED}, "AppInst.app_key.organization is empty"},
		{"huge app instance name", appInst(huge, appKey1, "c1", create), "AppInst.key.name is 10000 bytes long"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			w := newWorld()
			p := fake.New(fake.Options{})
			eng, err := executor.New(w.config(p))
			if err != nil {
				t.Fatal(err)
			}
			_, err = eng.Submit(tc.obj)
			var ve *executor.ValidationError
			if !errors.Is(err, executor.ErrBadObject) || !errors.As(err, &ve) {
				t.Fatalf("Submit = %v, want a ValidationError matching ErrBadObject", err)
			}
			if !strings.HasPrefix(err.Error(), tc.field) {
				t.Errorf("error %q does not start with %q", err, tc.field)
			}
			if len(err.Error()) > 200 {
				t.Errorf("error is %d bytes long: it echoes the bad value", len(err.Error()))
			}
		})
	}
}

// TestDeleteOfBadKeySucceeds: a delete is never refused for its key, and
// deleting what could never have been created reports DELETE_DONE.
func TestDeleteOfBadKeySucceeds(t *testing.T) {
	t.Parallel()
	w := newWorld()
	w.cloudlets.Put(cloudlet(edgeproto.TrackedState_TRACKED_STATE_READY))
	eng, err := executor.New(w.config(fake.New(fake.Options{})))
	if err != nil {
		t.Fatal(err)
	}
	start(t, eng)
	for _, name := range []string{"", strings.Repeat("x", 10000)} {
		ci := cluster(name, edgeproto.TrackedState_TRACKED_STATE_DELETE_REQUESTED)
		if err := wait(t, mustSubmit(t, eng, ci)); err != nil {
			t.Fatalf("delete of cluster named %.10q: %v", name, err)
		}
		if got := w.rec.states("ClusterInst", executor.KeyString(ci)); !slices.Equal(got, []string{sDeleting, sDeleteDone}) {
			t.Errorf("delete of cluster named %.10q reported %v", name, got)
		}
	}
}

// TestAppPortsValidated: an App whose ports break the limits fails the
// create of its instances before the platform is called, with an error
// naming the port.
func TestAppPortsValidated(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		port *edgeproto.Port
		want string
	}{
		{"internal port too large", &edgeproto.Port{Proto: edgeproto.PortProtocol_PORT_PROTOCOL_TCP, InternalPort: 2147483647}, "App.ports[0].internal_port is 2147483647, outside 1-65535"},
		{"internal port zero", &edgeproto.Port{Proto: edgeproto.PortProtocol_PORT_PROTOCOL_TCP}, "App.ports[0].internal_port is 0"},
		{"end below internal", &edgeproto.Port{Proto: edgeproto.PortProtocol_PORT_PROTOCOL_UDP, InternalPort: 100, EndPort: 99}, "App.ports[0].end_port is 99, want 0 or 100-65535"},
		{"unknown protocol", &edgeproto.Port{Proto: 42, InternalPort: 100}, "App.ports[0].proto is 42, not a known protocol"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			w := newWorld()
			w.cloudlets.Put(cloudlet(edgeproto.TrackedState_TRACKED_STATE_READY))
			w.clusters.Put(cluster("c1", edgeproto.TrackedState_TRACKED_STATE_READY))
			a := app(appKey1)
			a.Ports = []*edgeproto.Port{tc.port}
			w.apps.Put(a)
			p := fake.New(fake.Options{})
			eng, err := executor.New(w.config(p))
			if err != nil {
				t.Fatal(err)
			}
			start(t, eng)
			inst := appInst("i1", appKey1, "c1", edgeproto.TrackedState_TRACKED_STATE_CREATE_REQUESTED)
			err = wait(t, mustSubmit(t, eng, inst))
			if !errors.Is(err, executor.ErrBadObject) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("create = %v, want an error containing %q", err, tc.want)
			}
			if got := w.rec.states("AppInst", executor.KeyString(inst)); !slices.Equal(got, []string{sCreateError}) {
				t.Errorf("reported %v, want only CREATE_ERROR", got)
			}
			if n := p.Calls(fake.OpCreateAppInst, executor.KeyString(inst)); n != 0 {
				t.Errorf("platform called %d times", n)
			}
		})
	}
}
