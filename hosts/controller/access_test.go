package controller_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/hosts/controller/controllertest"
	"github.com/edgekit/edgekit/internal/store"
	"google.golang.org/grpc/codes"
)

func TestAccessControl(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	ctx := testCtx(t)
	env := w.env
	other := clientsOf(env.Conn(env.OrgToken("other")))
	anon := clientsOf(env.Conn(""))
	wrong := clientsOf(env.Conn("not-a-token-at-all"))
	ccrm := clientsOf(env.Conn(env.CCRMToken()))

	_, err := recvAll(anon.flavors.ShowFlavors(ctx, &edgeproto.ShowFlavorsRequest{}))
	wantCode(t, err, codes.Unauthenticated, "no token")
	_, err = wrong.apps.CreateApp(ctx, &edgeproto.CreateAppRequest{App: &edgeproto.App{}})
	wantCode(t, err, codes.Unauthenticated, "unknown token")
	_, err = ccrm.apps.CreateApp(ctx, &edgeproto.CreateAppRequest{App: &edgeproto.App{Key: w.app}})
	wantCode(t, err, codes.PermissionDenied, "a CCRM on the user API")

	// Another organization can neither change nor see, and the answer is
	// the same whether the object exists or not.
	for _, key := range []*edgeproto.ClusterKey{w.cluster, {Organization: "developer", Name: "missing"}} {
		_, err := drain(other.clusters.DeleteClusterInst(ctx, &edgeproto.DeleteClusterInstRequest{Key: key}))
		wantCode(t, err, codes.PermissionDenied, "delete another org's cluster "+key.Name)
		_, err = drain(other.clusters.UpdateClusterInst(ctx, &edgeproto.UpdateClusterInstRequest{
			ClusterInst: &edgeproto.ClusterInst{Key: key}, Fields: []string{edgeproto.ClusterInstFieldIpAccess}}))
		wantCode(t, err, codes.PermissionDenied, "update another org's cluster "+key.Name)
	}
	_, err = drain(other.clusters.CreateClusterInst(ctx, &edgeproto.CreateClusterInstRequest{ClusterInst: &edgeproto.ClusterInst{
		Key: &edgeproto.ClusterKey{Organization: "developer", Name: "sneaky"}, CloudletKey: w.cloudlet, FlavorName: "fake.small"}}))
	wantCode(t, err, codes.PermissionDenied, "create in another org")
	if got, _ := recvAll(other.clusters.ShowClusterInsts(ctx, &edgeproto.ShowClusterInstsRequest{})); len(got) != 0 {
		t.Errorf("another org sees %d clusters", len(got))
	}
	if got, _ := recvAll(w.admin.clusters.ShowClusterInsts(ctx, &edgeproto.ShowClusterInstsRequest{})); len(got) != 1 {
		t.Errorf("admin sees %d clusters, want 1", len(got))
	}
	// Flavors and settings are changed by admins only, seen by all.
	_, err = w.dev.flavors.CreateFlavor(ctx, &edgeproto.CreateFlavorRequest{Flavor: &edgeproto.Flavor{Key: &edgeproto.FlavorKey{Name: "mine"}}})
	wantCode(t, err, codes.PermissionDenied, "a developer creating a flavor")
	if got, _ := recvAll(w.dev.flavors.ShowFlavors(ctx, &edgeproto.ShowFlavorsRequest{})); len(got) != 1 {
		t.Errorf("a developer sees %d flavors, want 1", len(got))
	}
	_, err = w.dev.settings.UpdateSettings(ctx, &edgeproto.UpdateSettingsRequest{Settings: &edgeproto.Settings{MaxConcurrentTasks: 3},
		Fields: []string{edgeproto.SettingsFieldMaxConcurrentTasks}})
	wantCode(t, err, codes.PermissionDenied, "a developer changing settings")
	if _, err := w.dev.settings.ShowSettings(ctx, &edgeproto.ShowSettingsRequest{}); err != nil {
		t.Errorf("a developer showing settings: %v", err)
	}
}

func TestSecretsNeverLeaveInShow(t *testing.T) {
	t.Parallel()
	env := controllertest.Start(t, controllertest.Options{Host: true})
	ctx := testCtx(t)
	op := clientsOf(env.Conn(env.OrgToken("operator")))
	dev := clientsOf(env.Conn(env.OrgToken("developer")))
	const secret = "s3cr3t-value-never-shown"
	ps, err := drain(op.cloudlets.CreateCloudlet(ctx, &edgeproto.CreateCloudletRequest{Cloudlet: &edgeproto.Cloudlet{
		Key: &edgeproto.CloudletKey{Organization: "operator", Name: "s"}, PlatformType: "fake",
		AccessVars: map[string]string{"password": secret}}}))
	if err != nil || lastState(t, ps) != edgeproto.TrackedState_TRACKED_STATE_READY {
		t.Fatalf("create: %v %v", ps, err)
	}
	if _, err := dev.apps.CreateApp(ctx, &edgeproto.CreateAppRequest{App: &edgeproto.App{
		Key: &edgeproto.AppKey{Organization: "developer", Name: "a"}, Deployment: "docker",
		EnvVars: []*edgeproto.EnvVar{{Name: "PW", Secret: true, SecretValue: secret}}}}); err != nil {
		t.Fatal(err)
	}
	cls, err := recvAll(op.cloudlets.ShowCloudlets(ctx, &edgeproto.ShowCloudletsRequest{}))
	if err != nil || len(cls) != 1 {
		t.Fatalf("show cloudlets: %v %v", cls, err)
	}
	apps, err := recvAll(dev.apps.ShowApps(ctx, &edgeproto.ShowAppsRequest{}))
	if err != nil || len(apps) != 1 {
		t.Fatalf("show apps: %v %v", apps, err)
	}
	for _, m := range []string{fmt.Sprint(cls[0]), fmt.Sprint(apps[0])} {
		if strings.Contains(m, secret) {
			t.Errorf("a secret is shown: %s", m)
		}
	}
	// The stored object does hold the secret: the host needs it.
	stored, _, err := store.NewKind[*edgeproto.App](env.Store).Get(ctx, apps[0].(*edgeproto.App).GetKeyString())
	if err != nil || stored.EnvVars[0].SecretValue != secret {
		t.Errorf("stored App lost its secret: %v %v", stored, err)
	}
}
