package main

import (
	"context"
	"fmt"

	"google.golang.org/protobuf/proto"

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/internal/demoapp"
)

// lifecycle is the demo proper: create, use, update and delete.
func (d *demo) lifecycle(ctx context.Context, self string) error {
	cloudletKey := &edgeproto.CloudletKey{Organization: "demo", Name: "this-host"}
	cloudlet := &edgeproto.Cloudlet{
		Key:          cloudletKey,
		PlatformType: "local",
		State:        edgeproto.TrackedState_TRACKED_STATE_CREATE_REQUESTED,
		AccessVars:   map[string]string{"token": "never-printed"}, // debug_redact
	}
	d.printf("1. Bring the cloudlet %s under management\n", cloudlet.GetKeyString())
	d.cloudlets.Put(cloudlet)
	h, err := d.engine.SubmitCloudlet(cloudlet)
	if err := wait(ctx, "cloudlet create", h, err); err != nil {
		return err
	}
	info, _ := d.cloudletInfos.Get(cloudlet.GetKeyString())
	d.printf("   gathered: %d flavors, %d resources, %d node(s)\n",
		len(info.GetFlavors()), len(info.GetResourcesSnapshot().GetInfo()), len(info.GetNodeInfos()))
	d.printf("   access vars as logged (Redacted): %v; the object keeps %d\n",
		cloudlet.Redacted().GetAccessVars(), len(cloudlet.GetAccessVars()))
	d.setState(cloudlet, edgeproto.TrackedState_TRACKED_STATE_READY)

	cluster := &edgeproto.ClusterInst{
		Key:         &edgeproto.ClusterKey{Name: "demo-cluster", Organization: "demo"},
		CloudletKey: cloudletKey,
		Deployment:  "local",
		State:       edgeproto.TrackedState_TRACKED_STATE_CREATE_REQUESTED,
	}
	d.printf("\n2. Create the cluster %s\n", cluster.GetKeyString())
	d.clusters.Put(cluster)
	h, err = d.engine.SubmitClusterInst(cluster)
	if err := wait(ctx, "cluster create", h, err); err != nil {
		return err
	}
	d.applyClusterState(cluster)

	app := &edgeproto.App{
		Key:             &edgeproto.AppKey{Organization: "demo", Name: "hello", Version: "1.0"},
		Command:         self,
		Args:            []string{"serve"},
		HealthCheck:     edgeproto.HealthCheck_HEALTH_CHECK_HTTP,
		HealthCheckPath: "/healthz",
		Ports:           []*edgeproto.Port{{Proto: edgeproto.PortProtocol_PORT_PROTOCOL_TCP, InternalPort: 8080}},
		EnvVars:         []*edgeproto.EnvVar{{Name: "GREETING", Value: "hello"}},
	}
	d.apps.Put(app)
	inst := &edgeproto.AppInst{
		Key:         &edgeproto.AppInstKey{Name: "hello-1", Organization: "demo"},
		AppKey:      app.GetKey(),
		ClusterKey:  cluster.GetKey(),
		CloudletKey: cloudletKey,
		State:       edgeproto.TrackedState_TRACKED_STATE_CREATE_REQUESTED,
	}
	d.printf("\n3. Deploy %s as %s (a real process)\n", app.GetKeyString(), inst.GetKeyString())
	d.appInsts.Put(inst)
	h, err = d.engine.SubmitAppInst(inst)
	if err := wait(ctx, "app instance create", h, err); err != nil {
		return err
	}
	if err := d.probe(ctx, inst); err != nil {
		return err
	}

	d.printf("\n4. Update the app's environment with list actions (env_vars:remove, env_vars:add) and roll it out\n")
	update := &edgeproto.App{EnvVars: []*edgeproto.EnvVar{{Name: "GREETING", Value: "bonjour"}}}
	fm, err := app.FieldSchema().Parse("env_vars:remove")
	if err != nil {
		return err
	}
	n := app.CopyInFields(&edgeproto.App{EnvVars: []*edgeproto.EnvVar{{Name: "GREETING", Value: "hello"}}}, fm)
	d.printf("   CopyInFields(%v) changed %d field(s): env %v\n", fm, n, app.GetEnvVars())
	fm, err = app.FieldSchema().Parse("env_vars:add")
	if err != nil {
		return err
	}
	n = app.CopyInFields(update, fm)
	d.printf("   CopyInFields(%v) changed %d field(s): env %v\n", fm, n, app.GetEnvVars())
	d.apps.Put(app)
	d.setState(inst, edgeproto.TrackedState_TRACKED_STATE_UPDATE_REQUESTED)
	h, err = d.engine.SubmitAppInst(inst)
	if err := wait(ctx, "app instance update", h, err); err != nil {
		return err
	}
	if err := d.probe(ctx, inst); err != nil {
		return err
	}
	if d.keep {
		return nil
	}

	d.printf("\n5. Delete everything, newest first\n")
	d.setState(inst, edgeproto.TrackedState_TRACKED_STATE_DELETE_REQUESTED)
	h, err = d.engine.SubmitAppInst(inst)
	if err := wait(ctx, "app instance delete", h, err); err != nil {
		return err
	}
	d.setState(cluster, edgeproto.TrackedState_TRACKED_STATE_DELETE_REQUESTED)
	h, err = d.engine.SubmitClusterInst(cluster)
	if err := wait(ctx, "cluster delete", h, err); err != nil {
		return err
	}
	d.setState(cloudlet, edgeproto.TrackedState_TRACKED_STATE_DELETE_REQUESTED)
	h, err = d.engine.SubmitCloudlet(cloudlet)
	return wait(ctx, "cloudlet delete", h, err)
}

// setState moves a stored object to state, as a user's request through the
// controller would.
func (d *demo) setState(obj proto.Message, state edgeproto.TrackedState) {
	switch o := obj.(type) {
	case *edgeproto.Cloudlet:
		o.State = state
		d.cloudlets.Put(o)
	case *edgeproto.ClusterInst:
		o.State = state
		d.clusters.Put(o)
	case *edgeproto.AppInst:
		o.State = state
		d.appInsts.Put(o)
	}
}

// applyClusterState copies the engine's reported state into the cluster
// object, as the controller does when it accepts an Info report.
func (d *demo) applyClusterState(cluster *edgeproto.ClusterInst) {
	info, _ := d.clusterInfos.Get(cluster.GetKeyString())
	cluster.State = info.GetState()
	d.clusters.Put(cluster)
}

// probe applies the app instance's reported runtime info to the object and
// calls the application over HTTP.
func (d *demo) probe(ctx context.Context, inst *edgeproto.AppInst) error {
	info, _ := d.appInstInfos.Get(inst.GetKeyString())
	inst.State = info.GetState()
	inst.RuntimeInfo = info.GetRuntimeInfo().Clone()
	inst.Uri = info.GetUri()
	d.appInsts.Put(inst)
	ports := info.GetRuntimeInfo().GetPorts()
	if len(ports) == 0 {
		return fmt.Errorf("app instance %s reported no port", inst.GetKeyString())
	}
	body, err := demoapp.Get(ctx, fmt.Sprintf("http://127.0.0.1:%d/", ports[0]))
	if err != nil {
		return fmt.Errorf("calling the app: %w", err)
	}
	d.printf("   runtime: pids %v ports %v; GET / -> %q\n", info.GetRuntimeInfo().GetPids(), ports, body)
	return nil
}
