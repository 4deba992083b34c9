package kubernetes

import (
	"context"
	"sync"
	"testing"
	"time"

	k8s "k8s.io/client-go/kubernetes"

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/internal/testenv/k8senv"
)

func TestMain(m *testing.M) { k8senv.Shared(m) }

var nodesOnce sync.Once
var nodesErr error

// testEnv returns the package's control plane with its two nodes: node-a
// (4 CPUs, 8Gi, 2 GPUs) and node-b (2 CPUs, 4Gi).
func testEnv(t *testing.T) *k8senv.Env {
	t.Helper()
	env := k8senv.ForTest(t)
	nodesOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		if nodesErr = env.AddNode(ctx, k8senv.Node{Name: "node-a", CPU: "4", Memory: "8Gi", Pods: 50, Extended: map[string]string{"nvidia.com/gpu": "2"}}); nodesErr != nil {
			return
		}
		nodesErr = env.AddNode(ctx, k8senv.Node{Name: "node-b", CPU: "2", Memory: "4Gi", Pods: 50})
	})
	if nodesErr != nil {
		t.Fatalf("adding nodes: %v", nodesErr)
	}
	return env
}

// admin is a client of the control plane with every right, for checks.
func admin(t *testing.T, env *k8senv.Env) k8s.Interface {
	t.Helper()
	cs, err := k8s.NewForConfig(env.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

// testCloudlet is a cloudlet named name on env, with kubeconfig as its
// access variable.
func testCloudlet(name string, kubeconfig []byte) *edgeproto.Cloudlet {
	return &edgeproto.Cloudlet{
		Key:          &edgeproto.CloudletKey{Organization: "operator", Name: name},
		PlatformType: PlatformType,
		AccessVars:   map[string]string{AccessVarKubeconfig: string(kubeconfig)},
	}
}

func newPlatform(t *testing.T) *Platform {
	t.Helper()
	p, err := New(Config{})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// steps records progress.
type steps struct {
	mu  sync.Mutex
	all []string
}

func (s *steps) Step(m string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.all = append(s.all, m)
}

func (s *steps) list() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.all...)
}

func testCluster(cl *edgeproto.Cloudlet, name string) *edgeproto.ClusterInst {
	return &edgeproto.ClusterInst{Key: &edgeproto.ClusterKey{Name: name, Organization: "dev"},
		CloudletKey: cl.GetKey().Clone(), Deployment: "kubernetes"}
}

func testApp() *edgeproto.App {
	return &edgeproto.App{
		Key:         &edgeproto.AppKey{Organization: "dev", Name: "web", Version: "1"},
		ImageType:   edgeproto.ImageType_IMAGE_TYPE_DOCKER,
		ImagePath:   "registry.example/web:1",
		Deployment:  "kubernetes",
		HealthCheck: edgeproto.HealthCheck_HEALTH_CHECK_HTTP, HealthCheckPath: "/healthz",
		Ports: []*edgeproto.Port{{Proto: edgeproto.PortProtocol_PORT_PROTOCOL_TCP, InternalPort: 8080}},
	}
}

func testInst(ci *edgeproto.ClusterInst, app *edgeproto.App, name string) *edgeproto.AppInst {
	return &edgeproto.AppInst{Key: &edgeproto.AppInstKey{Name: name, Organization: "dev"},
		AppKey: app.GetKey().Clone(), ClusterKey: ci.GetKey().Clone(), CloudletKey: ci.GetCloudletKey().Clone()}
}
