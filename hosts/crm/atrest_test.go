package crm_test

import (
	"bytes"
	"context"
	"path/filepath"
	"sync"
	"testing"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/edgekit/edgekit/atrest"
	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/executor"
	"github.com/edgekit/edgekit/hosts/controller/controllertest"
	"github.com/edgekit/edgekit/platforms/fake"
)

// secretsSeen is the fake platform recording the secret env values of the
// Apps it creates instances of.
type secretsSeen struct {
	*fake.Platform
	mu   sync.Mutex
	seen []string
}

func (p *secretsSeen) CreateAppInst(ctx context.Context, cluster *edgeproto.ClusterInst, app *edgeproto.App, inst *edgeproto.AppInst, res executor.Reservations, pr executor.Progress) (*edgeproto.AppInstRuntime, error) {
	p.mu.Lock()
	for _, ev := range app.GetEnvVars() {
		if ev.GetSecret() {
			p.seen = append(p.seen, ev.GetSecretValue())
		}
	}
	p.mu.Unlock()
	return p.Platform.CreateAppInst(ctx, cluster, app, inst, res, pr)
}

// With the controller's store encrypted, the App's secret is sealed in
// etcd, and the CRM still gets it in clear over the notify stream (the
// stream's watch opens sealed values through the store's decoding).
func TestCRMGetsSecretsStoredEncrypted(t *testing.T) {
	t.Parallel()
	kr, _, err := atrest.EnsureKeyFile(filepath.Join(t.TempDir(), atrest.DefaultKeyFileName))
	if err != nil {
		t.Fatal(err)
	}
	e := newEdge(t, func(o *controllertest.Options) { o.KeyProvider = kr })
	ctx := testCtx(t)
	p := &secretsSeen{Platform: fake.New(fake.Options{})}
	c := e.startCRM(t, e.env.Addr, p)
	waitState[*edgeproto.Cloudlet](t, e, e.cloudlet, edgeproto.TrackedState_TRACKED_STATE_READY)
	<-c.Synced()
	ps, err := controllertest.Drain(e.dev.clusters.CreateClusterInst(ctx, &edgeproto.CreateClusterInstRequest{ClusterInst: e.cluster("c1")}))
	if err != nil || controllertest.Final(ps) != edgeproto.TrackedState_TRACKED_STATE_READY {
		t.Fatalf("create cluster: %v %v", ps, err)
	}
	const secret = "Planted-Secret-CRM-42"
	app := e.app("web")
	app.EnvVars = []*edgeproto.EnvVar{{Name: "DB_PASSWORD", Secret: true, SecretValue: secret}}
	if _, err := e.dev.apps.CreateApp(ctx, &edgeproto.CreateAppRequest{App: app}); err != nil {
		t.Fatal(err)
	}
	ps, err = controllertest.Drain(e.dev.appInsts.CreateAppInst(ctx, &edgeproto.CreateAppInstRequest{AppInst: e.appInst("i1", "web", "c1")}))
	if err != nil || controllertest.Final(ps) != edgeproto.TrackedState_TRACKED_STATE_READY {
		t.Fatalf("create app instance: %v %v", ps, err)
	}
	p.mu.Lock()
	seen := append([]string(nil), p.seen...)
	p.mu.Unlock()
	if len(seen) != 1 || seen[0] != secret {
		t.Errorf("the CRM's platform got the App's secrets %q, want [%s]", seen, secret)
	}
	resp, err := e.env.Store.Client().Get(ctx, e.env.Store.Prefix(), clientv3.WithPrefix())
	if err != nil {
		t.Fatal(err)
	}
	for _, kv := range resp.Kvs {
		if bytes.Contains(kv.Value, []byte(secret)) {
			t.Errorf("etcd's value of %s holds the App's secret in clear", kv.Key)
		}
	}
}
