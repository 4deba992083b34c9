package ccrm_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8s "k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/executor"
	"github.com/edgekit/edgekit/hosts/ccrm/ccrmtest"
	"github.com/edgekit/edgekit/hosts/controller"
	"github.com/edgekit/edgekit/hosts/controller/controllertest"
	"github.com/edgekit/edgekit/hosts/controller/ui"
	"github.com/edgekit/edgekit/hosts/controller/ui/uitest"
	"github.com/edgekit/edgekit/internal/testenv/k8senv"
	"github.com/edgekit/edgekit/internal/testenv/logbuf"
	"github.com/edgekit/edgekit/platforms/kubernetes"
)

// pageRecorder keeps every row the status page's sources emit, beside the
// current rows.
type pageRecorder struct {
	*uitest.Recorder
	all logbuf.Buffer
}

func (p *pageRecorder) Put(row ui.Row) {
	fmt.Fprintf(&p.all, "%+v\n", row)
	p.Recorder.Put(row)
}

// k8sRegion is a controller, two replica processes serving the kubernetes
// platform, and a cloudlet on the package's real control plane.
type k8sRegion struct {
	*ccrmtest.Region
	cs       k8s.Interface
	cloudlet *edgeproto.CloudletKey
	// secrets are what of the kubeconfig must never show: the whole of
	// it and its bearer token.
	secrets  []string
	ctrlLog  *logbuf.Buffer
	page     *pageRecorder
	replicas []*ccrmtest.Process
	// apps is the controller's App service; app the region's App.
	apps edgeproto.AppServiceClient
	app  *edgeproto.App
}

// k8sOptions change the region newK8sRegion starts.
type k8sOptions struct {
	// via, when not nil, changes the kubeconfig the cloudlet is given.
	via func([]byte) []byte
	// replicaArgs are more arguments of every replica.
	replicaArgs []string
}

// newK8sRegion starts the region of cloudlet k8s-<name>, with a node
// e2e-<name> added to the control plane, and an App "img" of an image
// (registry.example/web:1) with a TCP port.
func newK8sRegion(t *testing.T, ctx context.Context, name string, o k8sOptions) *k8sRegion {
	t.Helper()
	env := k8senv.ForTest(t)
	cs, err := k8s.NewForConfig(env.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	if err := env.AddNode(ctx, k8senv.Node{Name: "e2e-" + name, CPU: "4", Memory: "8Gi"}); err != nil {
		t.Fatal(err)
	}
	kc := env.Kubeconfig("edgekit-e2e-ccrm", "system:masters")
	cfg, err := clientcmd.Load(kc)
	if err != nil {
		t.Fatal(err)
	}
	secrets := []string{string(kc)}
	for _, ai := range cfg.AuthInfos {
		if ai.Token == "" {
			t.Fatal("the test kubeconfig has no token")
		}
		secrets = append(secrets, ai.Token)
	}
	logs := &logbuf.Buffer{}
	r := &k8sRegion{
		Region: ccrmtest.NewRegion(t, ccrmtest.RegionOptions{Cloudlets: 1,
			Logger: slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))}),
		cs: cs, cloudlet: &edgeproto.CloudletKey{Organization: "operator", Name: "k8s-" + name},
		secrets: secrets, ctrlLog: logs, page: &pageRecorder{Recorder: uitest.NewRecorder()},
	}
	uitest.Run(t, r.page, r.Env.Controller.UISources()...)
	// One operation at a time each: while one replica is in the middle
	// of an operation, the cloudlet's next one is the other's.
	for _, id := range []string{"k0", "k1"} {
		args := append([]string{"--platforms", kubernetes.PlatformType, "--metrics-listen", "127.0.0.1:0", "--workers", "1"}, o.replicaArgs...)
		r.replicas = append(r.replicas, ccrmtest.StartReplica(t, id, r.ReplicaArgs(id, 2*time.Second, args...), r.TokenEnv()))
	}
	if o.via != nil {
		kc = o.via(kc)
	}
	// Served by the CCRM (no crm_override): a replica initialises it,
	// which checks the kubeconfig's permissions on the API server.
	p, err := ccrmtest.Wait(r.Cloudlet.CreateCloudlet(ctx, &edgeproto.CreateCloudletRequest{Cloudlet: &edgeproto.Cloudlet{
		Key: r.cloudlet, PlatformType: kubernetes.PlatformType,
		AccessVars: map[string]string{kubernetes.AccessVarKubeconfig: string(kc)}}}))
	if err != nil || p.GetState() != edgeproto.TrackedState_TRACKED_STATE_READY {
		t.Fatalf("create cloudlet: %v, %v", p, err)
	}
	r.apps = edgeproto.NewAppServiceClient(r.Env.Conn(r.Env.AdminToken()))
	r.app = &edgeproto.App{Key: &edgeproto.AppKey{Organization: "dev", Name: "img", Version: "1"},
		Deployment: kubernetes.PlatformType, ImageType: edgeproto.ImageType_IMAGE_TYPE_DOCKER, ImagePath: "registry.example/web:1",
		Ports: []*edgeproto.Port{{Proto: edgeproto.PortProtocol_PORT_PROTOCOL_TCP, InternalPort: 8080}}}
	if _, err := r.apps.CreateApp(ctx, &edgeproto.CreateAppRequest{App: r.app}); err != nil {
		t.Fatal(err)
	}
	return r
}

// readyCluster creates cluster dev/<name> of nodes of vcpus and ramMB on
// the region's cloudlet, READY with one namespace.
func (r *k8sRegion) readyCluster(t *testing.T, ctx context.Context, name string, vcpus uint64, ramMB uint64) *edgeproto.ClusterKey {
	t.Helper()
	ck := &edgeproto.ClusterKey{Organization: "dev", Name: name}
	before, err := r.namespaces(ctx)
	if err != nil {
		t.Fatal(err)
	}
	p, err := ccrmtest.Wait(r.Cluster.CreateClusterInst(ctx, &edgeproto.CreateClusterInstRequest{ClusterInst: &edgeproto.ClusterInst{
		Key: ck, CloudletKey: r.cloudlet, Deployment: kubernetes.PlatformType,
		NodePools: []*edgeproto.NodePool{{Name: "pool", NumNodes: 1, NodeResources: &edgeproto.NodeResources{Vcpus: vcpus, RamMb: ramMB}}}}}))
	r.want(t, "create cluster "+name, p, err, edgeproto.TrackedState_TRACKED_STATE_READY)
	if nss, err := r.namespaces(ctx); err != nil || len(nss) != len(before)+1 {
		t.Fatalf("namespaces of the cloudlet after the create of cluster %s: %v, %v; want one more than %v", name, nss, err, before)
	}
	return ck
}

// readyInstance creates instance dev/<name> of the region's App on
// cluster ck, READY with one Deployment, whose namespace and name it
// returns.
func (r *k8sRegion) readyInstance(t *testing.T, ctx context.Context, name string, ck *edgeproto.ClusterKey) (*edgeproto.AppInstKey, string, string) {
	t.Helper()
	ak := &edgeproto.AppInstKey{Organization: "dev", Name: name}
	p, err := ccrmtest.Wait(r.AppInst.CreateAppInst(ctx, &edgeproto.CreateAppInstRequest{AppInst: &edgeproto.AppInst{
		Key: ak, AppKey: r.app.Key, ClusterKey: ck}}))
	r.want(t, "create instance "+name, p, err, edgeproto.TrackedState_TRACKED_STATE_READY)
	deps, err := r.deployments(ctx, ak.Name)
	if err != nil || len(deps) != 1 {
		t.Fatalf("deployments of %s: %v, %v; want one", ak.Name, deps, err)
	}
	ns, dep, _ := strings.Cut(deps[0], "/")
	return ak, ns, dep
}

// deployments lists the Deployments of instance name on the region's
// cloudlet, from the labels and annotations the platform writes.
func (r *k8sRegion) deployments(ctx context.Context, name string) ([]string, error) {
	l, err := r.cs.AppsV1().Deployments("").List(ctx, metav1.ListOptions{LabelSelector: kubernetes.LabelManagedBy + "=edgekit"})
	if err != nil {
		return nil, err
	}
	var out []string
	for _, d := range l.Items {
		if strings.Contains(d.Annotations[kubernetes.AnnCloudletKey], `"`+r.cloudlet.Name+`"`) &&
			strings.Contains(d.Annotations[kubernetes.AnnAppInstKey], `"`+name+`"`) {
			out = append(out, d.Namespace+"/"+d.Name)
		}
	}
	return out, nil
}

// namespaces lists the namespaces of the region's cloudlet.
func (r *k8sRegion) namespaces(ctx context.Context) ([]string, error) {
	l, err := r.cs.CoreV1().Namespaces().List(ctx, metav1.ListOptions{LabelSelector: kubernetes.LabelManagedBy + "=edgekit"})
	if err != nil {
		return nil, err
	}
	var out []string
	for _, n := range l.Items {
		if strings.Contains(n.Annotations[kubernetes.AnnCloudletKey], `"`+r.cloudlet.Name+`"`) {
			out = append(out, n.Name)
		}
	}
	return out, nil
}

func (r *k8sRegion) want(t *testing.T, step string, p *edgeproto.Progress, err error, s edgeproto.TrackedState) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", step, err)
	}
	if p.GetState() != s {
		t.Fatalf("%s ended in %v (%v), want %v", step, p.GetState(), p.GetErrors(), s)
	}
}

// appInstState is the state and errors of the instance of key, as
// ShowAppInsts shows them (0 when it shows none).
func (r *k8sRegion) appInstState(t *testing.T, ctx context.Context, key *edgeproto.AppInstKey) (edgeproto.TrackedState, []string) {
	t.Helper()
	s, err := r.AppInst.ShowAppInsts(ctx, &edgeproto.ShowAppInstsRequest{Filter: &edgeproto.AppInst{Key: key}})
	if err != nil {
		t.Fatal(err)
	}
	for {
		m, err := s.Recv()
		if err != nil {
			return 0, nil
		}
		if m.GetAppInst().GetKey().GetName() == key.Name {
			return m.GetAppInst().GetState(), m.GetAppInst().GetErrors()
		}
	}
}

// scrapeMetrics reads the /metrics of a replica process, at the address
// its log gives.
func scrapeMetrics(t *testing.T, ctx context.Context, rp *ccrmtest.Process) string {
	t.Helper()
	// The log holds every run of the process: the last address is the
	// current run's.
	all := regexp.MustCompile(`msg=metrics addr=(http://\S+/metrics)`).FindAllStringSubmatch(rp.Log(), -1)
	if all == nil {
		t.Fatal("the replica's log does not say where its metrics are")
	}
	m := all[len(all)-1]
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, m[1], nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK || len(b) == 0 {
		t.Fatalf("metrics of the replica: %s, %d bytes, %v", resp.Status, len(b), err)
	}
	return string(b)
}

// noSecret fails t when what holds the kubeconfig or its token.
func (r *k8sRegion) noSecret(t *testing.T, where, what string) {
	t.Helper()
	for _, s := range r.secrets {
		if strings.Contains(what, s) {
			t.Errorf("the cloudlet's kubeconfig (or its token) is in %s", where)
			return
		}
	}
}

// A Kubernetes cloudlet served by two CCRM replica processes, end to end:
// the kubeconfig reaches the replicas (they initialise the cloudlet and
// drive its cluster with it) and nothing shows it (Show output, the
// status page, logs, the replicas' metrics); a cluster and an image
// App's instance go through create (READY once its pods run), an image
// rollout, power off and on, and delete, which leaves nothing behind; an
// instance whose pods fit on no node fails with the scheduler's reason;
// the replica running a create killed with SIGKILL once it wrote the
// Deployment (while it is, the other replica serves the cloudlet too),
// the other finishes it with exactly one Deployment.
func TestKubernetesCloudletEndToEnd(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	// The Service write of instance "killed" (after its Deployment's) is
	// held: its replica is in the middle of the create when it is killed.
	proxy := newHoldProxy(t, k8senv.ForTest(t), func(r *http.Request, body []byte) bool {
		return r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/services") && bytes.Contains(body, []byte(`\"name\":\"killed\"`))
	})
	r := newK8sRegion(t, ctx, "e2e", k8sOptions{via: proxy.kubeconfig(t)})
	ready, done := edgeproto.TrackedState_TRACKED_STATE_READY, edgeproto.TrackedState_TRACKED_STATE_DELETE_DONE
	apps, app := r.apps, r.app
	const huge = "k8s.node.64c.1024m"
	if _, err := edgeproto.NewFlavorServiceClient(r.Env.Conn(r.Env.AdminToken())).CreateFlavor(ctx, &edgeproto.CreateFlavorRequest{Flavor: &edgeproto.Flavor{
		Key: &edgeproto.FlavorKey{Name: huge}, Vcpus: 64, RamMb: 1024}}); err != nil {
		t.Fatal(err)
	}
	ck := r.readyCluster(t, ctx, "e2e", 128, 8192)

	// An image App's instance: READY once its pods run.
	ak, ns, name := r.readyInstance(t, ctx, "web", ck)
	running := func() int {
		pods, err := r.cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: kubernetes.LabelManagedBy + "=edgekit"})
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, p := range pods.Items {
			if p.Status.Phase == "Running" && p.DeletionTimestamp == nil {
				n++
			}
		}
		return n
	}
	if n := running(); n != 1 {
		t.Fatalf("%d pods running when the instance is READY, want 1", n)
	}

	// A new image, rolled out by an update of the instance.
	if _, err := apps.UpdateApp(ctx, &edgeproto.UpdateAppRequest{App: &edgeproto.App{Key: app.Key, ImagePath: "registry.example/web:2"},
		Fields: []string{edgeproto.AppFieldImagePath}}); err != nil {
		t.Fatal(err)
	}
	p, err := ccrmtest.Wait(r.AppInst.UpdateAppInst(ctx, &edgeproto.UpdateAppInstRequest{AppInst: &edgeproto.AppInst{
		Key: ak, Annotations: map[string]string{"rollout": "2"}}, Fields: []string{edgeproto.AppInstFieldAnnotations}}))
	r.want(t, "update instance", p, err, ready)
	dep, err := r.cs.AppsV1().Deployments(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if img := dep.Spec.Template.Spec.Containers[0].Image; img != "registry.example/web:2" {
		t.Fatalf("image after the update %q, want registry.example/web:2", img)
	}
	if dep.Status.UpdatedReplicas != 1 || dep.Status.ReadyReplicas != 1 {
		t.Errorf("deployment status after the rollout %+v, want 1 updated and ready", dep.Status)
	}

	// Power off scales to 0, power on restores.
	for _, ps := range []struct {
		req      edgeproto.PowerState
		replicas int32
	}{{edgeproto.PowerState_POWER_STATE_POWER_OFF_REQUESTED, 0}, {edgeproto.PowerState_POWER_STATE_POWER_ON_REQUESTED, 1}} {
		p, err = ccrmtest.Wait(r.AppInst.UpdateAppInst(ctx, &edgeproto.UpdateAppInstRequest{AppInst: &edgeproto.AppInst{
			Key: ak, PowerState: ps.req}, Fields: []string{edgeproto.AppInstFieldPowerState}}))
		r.want(t, ps.req.String(), p, err, ready)
		dep, err := r.cs.AppsV1().Deployments(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if *dep.Spec.Replicas != ps.replicas {
			t.Fatalf("after %v the Deployment asks for %d replicas, want %d", ps.req, *dep.Spec.Replicas, ps.replicas)
		}
	}
	if n := running(); n != 1 {
		t.Fatalf("%d pods running after power on, want 1", n)
	}

	// Pods that fit on no node: CREATE_ERROR with the scheduler's reason.
	hk := &edgeproto.AppInstKey{Organization: "dev", Name: "huge"}
	_, err = ccrmtest.Wait(r.AppInst.CreateAppInst(ctx, &edgeproto.CreateAppInstRequest{AppInst: &edgeproto.AppInst{
		Key: hk, AppKey: app.Key, ClusterKey: ck, Flavor: huge}}))
	if err == nil || !strings.Contains(err.Error(), "FailedScheduling") || !strings.Contains(err.Error(), "Insufficient cpu") {
		t.Errorf("create of pods too big for the node: %v, want FailedScheduling: ... Insufficient cpu", err)
	}
	if st, errs := r.appInstState(t, ctx, hk); st != edgeproto.TrackedState_TRACKED_STATE_CREATE_ERROR ||
		!strings.Contains(strings.Join(errs, "; "), "FailedScheduling") {
		t.Errorf("the instance whose pods cannot schedule is %v with errors %q, want CREATE_ERROR with FailedScheduling", st, errs)
	}
	p, err = ccrmtest.Wait(r.AppInst.DeleteAppInst(ctx, &edgeproto.DeleteAppInstRequest{Key: hk}))
	r.want(t, "delete the unschedulable instance", p, err, done)

	// The replica running a create killed with SIGKILL: the other takes
	// the claim over when its lease expires and finishes the create, with
	// one Deployment.
	kk := &edgeproto.AppInstKey{Organization: "dev", Name: "killed"}
	claimKey := controller.ClaimKey(r.Env.Store.Prefix(), "AppInst", executor.KeyString(kk))
	holder := func() string {
		resp, err := r.Env.Store.Client().Get(ctx, claimKey)
		if err != nil || len(resp.Kvs) == 0 {
			return ""
		}
		return string(resp.Kvs[0].Value)
	}
	if _, err := ccrmtest.Wait(r.AppInst.CreateAppInst(ctx, &edgeproto.CreateAppInstRequest{NoWait: true, AppInst: &edgeproto.AppInst{
		Key: kk, AppKey: app.Key, ClusterKey: ck}})); err != nil {
		t.Fatal(err)
	}
	select {
	case <-proxy.reached:
	case <-ctx.Done():
		t.Fatal("no replica wrote the Service of the instance to kill the create of")
	}
	killed := holder()
	if deps, err := r.deployments(ctx, kk.Name); err != nil || len(deps) != 1 {
		t.Fatalf("deployments of %s when its Service is written: %v, %v; want one", kk.Name, deps, err)
	}
	// Both replicas serve the cloudlet at the same time: while the holder
	// is in the middle of the create, the other creates another instance.
	bk := &edgeproto.AppInstKey{Organization: "dev", Name: "beside"}
	p, err = ccrmtest.Wait(r.AppInst.CreateAppInst(ctx, &edgeproto.CreateAppInstRequest{AppInst: &edgeproto.AppInst{
		Key: bk, AppKey: app.Key, ClusterKey: ck}}))
	r.want(t, "create an instance beside the held create", p, err, ready)
	if h := holder(); h != killed {
		t.Fatalf("the held create is claimed by %q, was %q", h, killed)
	}
	victim := -1
	for i, rp := range r.replicas {
		if fmt.Sprintf("k%d", i) == killed {
			rp.Kill()
			victim = i
		}
	}
	if victim < 0 {
		t.Fatalf("the create is claimed by %q, not by a replica of the test", killed)
	}
	besideDone := regexp.MustCompile(`msg="operation done" .*key="name=beside,organization=dev" op=create`)
	if other := r.replicas[1-victim]; !besideDone.MatchString(other.Log()) {
		t.Errorf("replica k%d did not create the instance beside the held create", 1-victim)
	}
	state := func() (edgeproto.TrackedState, []string) { return r.appInstState(t, ctx, kk) }
	controllertest.WaitFor(t, 60*time.Second, "the killed create to end READY", func() bool {
		st, _ := state()
		return st == ready || st == edgeproto.TrackedState_TRACKED_STATE_CREATE_ERROR
	})
	if st, errs := state(); st != ready {
		t.Fatalf("create after its replica %s was killed ended %v (%v), want READY", killed, st, errs)
	}
	if deps, err := r.deployments(ctx, kk.Name); err != nil || len(deps) != 1 {
		t.Fatalf("deployments of %s after its replica was killed: %v, %v; want exactly one", kk.Name, deps, err)
	}
	for _, k := range []*edgeproto.AppInstKey{kk, bk} {
		p, err = ccrmtest.Wait(r.AppInst.DeleteAppInst(ctx, &edgeproto.DeleteAppInstRequest{Key: k}))
		r.want(t, "delete instance "+k.Name, p, err, done)
	}

	// Delete: nothing of the instance or the cluster is left.
	p, err = ccrmtest.Wait(r.AppInst.DeleteAppInst(ctx, &edgeproto.DeleteAppInstRequest{Key: ak}))
	r.want(t, "delete instance", p, err, done)
	if deps, err := r.deployments(ctx, ak.Name); err != nil || len(deps) != 0 {
		t.Fatalf("deployments of %s after its delete: %v, %v; want none", ak.Name, deps, err)
	}
	p, err = ccrmtest.Wait(r.Cluster.DeleteClusterInst(ctx, &edgeproto.DeleteClusterInstRequest{Key: ck}))
	r.want(t, "delete cluster", p, err, done)
	if nss, err := r.namespaces(ctx); err != nil || len(nss) != 0 {
		t.Fatalf("namespaces of the cloudlet after the cluster's delete: %v, %v; want none", nss, err)
	}

	// The kubeconfig reached the replicas (they drove the cluster with
	// it) and shows nowhere: not in Show output, the controller's logs
	// or the replicas' logs, nor in any row of the status page.
	s, err := r.Cloudlet.ShowCloudlets(ctx, &edgeproto.ShowCloudletsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	shown := 0
	for {
		m, err := s.Recv()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if m.GetCloudlet().GetKey().GetName() == r.cloudlet.Name {
			shown++
			if len(m.GetCloudlet().GetAccessVars()) != 0 {
				t.Errorf("ShowCloudlets shows access variables %v", m.GetCloudlet().GetAccessVars())
			}
		}
		r.noSecret(t, "ShowCloudlets", fmt.Sprint(m))
	}
	if shown != 1 {
		t.Errorf("ShowCloudlets showed the cloudlet %d times, want once", shown)
	}
	r.page.Wait(t, "Cloudlet", (&edgeproto.Cloudlet{Key: r.cloudlet}).GetKeyString(), 10*time.Second, "READY on the status page",
		func(row ui.Row, found bool) bool { return found && row.State == "READY" })
	r.noSecret(t, "the status page's rows", r.page.all.String())
	if r.ctrlLog.String() == "" {
		t.Error("the controller logged nothing: the log check would prove nothing")
	}
	r.noSecret(t, "the controller's log", r.ctrlLog.String())
	for i, rp := range r.replicas {
		if i != victim {
			r.noSecret(t, fmt.Sprintf("replica k%d's metrics", i), scrapeMetrics(t, ctx, rp))
		}
		if rp.Log() == "" {
			t.Errorf("replica k%d logged nothing", i)
		}
		r.noSecret(t, fmt.Sprintf("replica k%d's log", i), rp.Log())
	}
}
