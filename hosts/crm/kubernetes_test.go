package crm_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8s "k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/hosts/controller"
	"github.com/edgekit/edgekit/hosts/controller/controllertest"
	"github.com/edgekit/edgekit/hosts/controller/ui/uitest"
	"github.com/edgekit/edgekit/hosts/crm"
	"github.com/edgekit/edgekit/internal/cli/clitest"
	"github.com/edgekit/edgekit/internal/cli/edgectl"
	"github.com/edgekit/edgekit/internal/testenv/k8senv"
	"github.com/edgekit/edgekit/internal/testenv/logbuf"
	"github.com/edgekit/edgekit/platforms/kubernetes"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/encoding/protojson"
)

// TestMain closes the control plane that k8senv.ForTest starts.
func TestMain(m *testing.M) { k8senv.Shared(m) }

// Markers planted in the cloudlet's kubeconfigs (followed by the user's
// name): a comment (which only the kubeconfig's text carries) and the
// token of an extra user no context uses (which its parsed form carries
// too). Neither changes what the kubeconfig grants.
const (
	plantedComment = "edgekit-planted-kubeconfig-comment-5f1c9e-"
	plantedToken   = "edgekit-planted-kubeconfig-token-83d2a7-"
)

// plantedKubeconfig returns a kubeconfig of env's cluster for user in
// groups, with the planted markers, and adds to *secrets what of it must
// never show: the whole of it, its bearer token and the markers.
func plantedKubeconfig(t *testing.T, env *k8senv.Env, secrets *[]string, user string, groups ...string) []byte {
	t.Helper()
	cfg, err := clientcmd.Load(env.Kubeconfig(user, groups...))
	if err != nil {
		t.Fatal(err)
	}
	*secrets = append(*secrets, plantedComment+user, plantedToken+user)
	for _, ai := range cfg.AuthInfos {
		if len(ai.Token) < 16 {
			t.Fatalf("the test kubeconfig carries no bearer token to look for (%d bytes)", len(ai.Token))
		}
		*secrets = append(*secrets, ai.Token)
	}
	cfg.AuthInfos["planted-unused"] = &clientcmdapi.AuthInfo{Token: plantedToken + user}
	b, err := clientcmd.Write(*cfg)
	if err != nil {
		t.Fatal(err)
	}
	kc := append([]byte("# "+plantedComment+user+"\n"), b...)
	*secrets = append(*secrets, string(kc))
	return kc
}

// k8sEdge is a controller and a CRM run as their mains run them (in the
// test's process, each logging into a buffer of its own), the CRM on the
// kubernetes platform for a crm_on_edge cloudlet whose access variable
// KUBECONFIG is the package's control plane's.
type k8sEdge struct {
	env             *k8senv.Env
	cs              k8s.Interface
	cloudlet        *edgeproto.CloudletKey
	ctrl            *controller.Running
	crm             *crm.Running
	ctrlLog, crmLog *logbuf.Buffer
	// Tokens of an admin, the cloudlet's operator and a developer, and
	// connections to the controller with them.
	admin, op, dev    string
	adminC, opC, devC *grpc.ClientConn
	secrets           []string
	// progress is what the calls of changes answered (their progress
	// streams), searched like Show output.
	progress strings.Builder
	keyFile  string // the cloudlet's access key
	// stopCRM stops the running CRM and waits until Run returned.
	stopCRM func()
	// events is the status page's event stream, followed by an admin
	// since before the cloudlet was created.
	events *uitest.Stream
}

func newK8sEdge(t *testing.T, ctx context.Context) *k8sEdge {
	t.Helper()
	env := k8senv.ForTest(t)
	cs, err := k8s.NewForConfig(env.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	if err := env.AddNode(ctx, k8senv.Node{Name: "crm-edge", CPU: "4", Memory: "8Gi"}); err != nil {
		t.Fatal(err)
	}
	e := &k8sEdge{env: env, cs: cs, cloudlet: &edgeproto.CloudletKey{Organization: "operator", Name: "k8s-edge"},
		ctrlLog: &logbuf.Buffer{}, crmLog: &logbuf.Buffer{}}
	kc := plantedKubeconfig(t, env, &e.secrets, "edgekit-e2e-crm", "system:masters")

	// The controller, with tokens of the operator and the developer.
	dir := t.TempDir()
	for _, tok := range []*string{&e.op, &e.dev} {
		if *tok, err = controller.NewToken(); err != nil {
			t.Fatal(err)
		}
	}
	tokens := filepath.Join(dir, "tokens")
	if err := os.WriteFile(tokens, []byte(e.op+" org:operator\n"+e.dev+" org:developer\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	e.ctrl, _ = runUntilReady(t, ctx, "controller", func(ctx context.Context, ready func(*controller.Running)) error {
		return controller.Run(ctx, controller.Options{DataDir: filepath.Join(dir, "data"), Listen: "127.0.0.1:0",
			MetricsListen: "127.0.0.1:0", TokensFile: tokens, Logger: debugLogger(e.ctrlLog), StopTimeout: 10 * time.Second,
			Ready: ready})
	})
	admin, err := os.ReadFile(e.ctrl.AdminTokenFile)
	if err != nil {
		t.Fatal(err)
	}
	e.admin = strings.TrimSpace(string(admin))
	conn := func(tok string) *grpc.ClientConn {
		c, err := grpc.NewClient(e.ctrl.Addr, grpc.WithTransportCredentials(insecure.NewCredentials()),
			grpc.WithPerRPCCredentials(controllertest.BearerToken(tok)))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Close() })
		return c
	}
	e.adminC, e.opC, e.devC = conn(e.admin), conn(e.op), conn(e.dev)

	// The status page's event stream, followed from before the cloudlet
	// exists: every event it sends is searched.
	page := uitest.NewClient(t, "http://"+e.ctrl.MetricsAddr+"/ui/", nil)
	page.Login(e.admin)
	e.events = page.Open()

	// The operator creates the cloudlet with its kubeconfig, and runs its
	// CRM on the site.
	rs, err := controllertest.Collect(edgeproto.NewCloudletServiceClient(e.opC).CreateCloudlet(ctx, &edgeproto.CreateCloudletRequest{NoWait: true,
		Cloudlet: &edgeproto.Cloudlet{Key: e.cloudlet, PlatformType: kubernetes.PlatformType, CrmOnEdge: true,
			AccessVars: map[string]string{kubernetes.AccessVarKubeconfig: string(kc)}}}))
	if err != nil {
		t.Fatalf("create cloudlet: %v", err)
	}
	key := ""
	for _, r := range rs {
		fmt.Fprintf(&e.progress, "%v\n", r.GetProgress())
		if r.GetCrmAccessKey() != "" {
			key = r.GetCrmAccessKey()
		}
	}
	if key == "" {
		t.Fatal("create cloudlet: no access key in the answer")
	}
	e.keyFile = filepath.Join(t.TempDir(), "k8s-edge.key")
	if err := os.WriteFile(e.keyFile, []byte(key+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	e.startCRM(t, ctx)
	controllertest.WaitFor(t, 60*time.Second, "the cloudlet READY", func() bool {
		cl := e.showCloudlet(t, ctx, e.adminC)
		return cl.GetState() == edgeproto.TrackedState_TRACKED_STATE_READY
	})
	return e
}

// startCRM runs the cloudlet's CRM (as its main does) until stopCRM or
// the test's end, which stops it before the controller.
func (e *k8sEdge) startCRM(t *testing.T, ctx context.Context) {
	t.Helper()
	e.crm, e.stopCRM = runUntilReady(t, ctx, "crm", func(ctx context.Context, ready func(*crm.Running)) error {
		return crm.Run(ctx, crm.Options{Controller: e.ctrl.Addr, Cloudlet: "operator/k8s-edge", AccessKeyFile: e.keyFile,
			Platform: kubernetes.PlatformType, MetricsListen: "127.0.0.1:0", Logger: debugLogger(e.crmLog), StopTimeout: 10 * time.Second,
			ReconnectMin: 20 * time.Millisecond, ReconnectMax: 200 * time.Millisecond, Ready: ready})
	})
}

// runUntilReady runs run (a process's Run, calling ready once it serves)
// in a goroutine and returns what it gave ready, and stop, which ends it
// and waits until it returned; the test's end stops it too (the later
// started first). An error of run fails t.
func runUntilReady[R any](t *testing.T, ctx context.Context, name string, run func(ctx context.Context, ready func(R)) error) (R, func()) {
	t.Helper()
	rctx, cancel := context.WithCancel(context.Background())
	readyCh, done := make(chan R, 1), make(chan struct{})
	var wg sync.WaitGroup
	stop := func() { cancel(); wg.Wait() }
	t.Cleanup(stop)
	wg.Go(func() {
		defer close(done)
		if err := run(rctx, func(r R) { readyCh <- r }); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	})
	select {
	case r := <-readyCh:
		return r, stop
	case <-done:
		t.Fatalf("the %s returned before it was ready", name)
	case <-ctx.Done():
		t.Fatalf("the %s did not become ready", name)
	}
	var none R
	return none, stop
}

// debugLogger logs everything into b.
func debugLogger(b *logbuf.Buffer) *slog.Logger {
	return slog.New(slog.NewTextHandler(b, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// shown returns a function that reads a Show stream to its end and
// returns the object of key in it (get takes it out of a response), or nil
// when the stream has none; an error of the stream fails t.
func shown[R any, T interface{ GetKeyString() string }](t *testing.T, key string, get func(R) T) func(s interface{ Recv() (R, error) }, err error) T {
	return func(s interface{ Recv() (R, error) }, err error) T {
		t.Helper()
		rs, err := controllertest.Collect(s, err)
		if err != nil {
			t.Fatal(err)
		}
		var none T
		for _, r := range rs {
			if o := get(r); o.GetKeyString() == key {
				return o
			}
		}
		return none
	}
}

// showCloudlet is the edge's cloudlet as ShowCloudlets shows it through
// conn (nil when it shows none).
func (e *k8sEdge) showCloudlet(t *testing.T, ctx context.Context, conn *grpc.ClientConn) *edgeproto.Cloudlet {
	t.Helper()
	key := &edgeproto.Cloudlet{Key: e.cloudlet}
	return shown(t, key.GetKeyString(), (*edgeproto.ShowCloudletsResponse).GetCloudlet)(
		edgeproto.NewCloudletServiceClient(conn).ShowCloudlets(ctx, &edgeproto.ShowCloudletsRequest{Filter: key}))
}

// showCluster is the cluster of key as ShowClusterInsts shows it to the
// developer (nil when it shows none).
func (e *k8sEdge) showCluster(t *testing.T, ctx context.Context, key *edgeproto.ClusterKey) *edgeproto.ClusterInst {
	t.Helper()
	f := &edgeproto.ClusterInst{Key: key}
	return shown(t, f.GetKeyString(), (*edgeproto.ShowClusterInstsResponse).GetClusterInst)(
		edgeproto.NewClusterInstServiceClient(e.devC).ShowClusterInsts(ctx, &edgeproto.ShowClusterInstsRequest{Filter: f}))
}

// showAppInst is the instance of key as ShowAppInsts shows it to the
// developer (nil when it shows none).
func (e *k8sEdge) showAppInst(t *testing.T, ctx context.Context, key *edgeproto.AppInstKey) *edgeproto.AppInst {
	t.Helper()
	f := &edgeproto.AppInst{Key: key}
	return shown(t, f.GetKeyString(), (*edgeproto.ShowAppInstsResponse).GetAppInst)(
		edgeproto.NewAppInstServiceClient(e.devC).ShowAppInsts(ctx, &edgeproto.ShowAppInstsRequest{Filter: f}))
}

// namespaces lists the namespaces the platform made for the edge's
// cloudlet.
func (e *k8sEdge) namespaces(t *testing.T, ctx context.Context) []string {
	t.Helper()
	l, err := e.cs.CoreV1().Namespaces().List(ctx, metav1.ListOptions{LabelSelector: kubernetes.LabelManagedBy + "=edgekit"})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, n := range l.Items {
		if strings.Contains(n.Annotations[kubernetes.AnnCloudletKey], `"`+e.cloudlet.Name+`"`) {
			out = append(out, n.Name)
		}
	}
	return out
}

// deployments lists the Deployments of instance name, "namespace/name".
func (e *k8sEdge) deployments(t *testing.T, ctx context.Context, name string) []string {
	t.Helper()
	l, err := e.cs.AppsV1().Deployments("").List(ctx, metav1.ListOptions{LabelSelector: kubernetes.LabelManagedBy + "=edgekit"})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, d := range l.Items {
		if strings.Contains(d.Annotations[kubernetes.AnnCloudletKey], `"`+e.cloudlet.Name+`"`) &&
			strings.Contains(d.Annotations[kubernetes.AnnAppInstKey], `"`+name+`"`) {
			out = append(out, d.Namespace+"/"+d.Name)
		}
	}
	return out
}

// noSecret fails t when what holds the kubeconfig, its token or a
// planted marker.
func (e *k8sEdge) noSecret(t *testing.T, where, what string) {
	t.Helper()
	if what == "" {
		t.Errorf("%s is empty: searching it proves nothing", where)
	}
	for _, s := range e.secrets {
		if strings.Contains(what, s) {
			t.Errorf("the cloudlet's kubeconfig (or its token, or a marker planted in it) is in %s", where)
			return
		}
	}
}

// httpGet reads url with c, failing t unless it answers 200.
func httpGet(t *testing.T, ctx context.Context, c *http.Client, url string) string {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s, %v", url, resp.Status, err)
	}
	return string(b)
}

// edgectl runs edgectl (in process) against the controller with token and
// returns what it printed on stdout.
func (e *k8sEdge) edgectl(t *testing.T, ctx context.Context, token string, args ...string) string {
	t.Helper()
	env := map[string]string{"EDGECTL_TOKEN": token, "EDGECTL_CONFIG": filepath.Join(t.TempDir(), "edgectl.yaml")}
	var out, errOut clitest.Buffer
	code := edgectl.Execute(ctx, edgectl.Options{In: strings.NewReader(""), Out: &out, ErrOut: &errOut,
		Getenv: func(k string) string { return env[k] }}, append([]string{"--addr", e.ctrl.Addr, "--insecure"}, args...))
	if code != 0 {
		t.Fatalf("edgectl %s: exit code %d\n%s", strings.Join(args, " "), code, errOut.String())
	}
	e.noSecret(t, "edgectl's error output of "+strings.Join(args, " "), errOut.String()+" ")
	return out.String()
}

// searchSecrets looks for the kubeconfig everywhere a user or an operator
// reads: Show output over gRPC (admin and the operator), edgectl's show
// in every format, the progress the changes answered, the status page (its HTML, its snapshot and every event
// its stream sent), /metrics of the controller and of the CRM, and the
// logs of both.
func (e *k8sEdge) searchSecrets(t *testing.T, ctx context.Context) {
	t.Helper()
	for who, conn := range map[string]*grpc.ClientConn{"admin": e.adminC, "the operator": e.opC} {
		cl := e.showCloudlet(t, ctx, conn)
		if cl == nil {
			t.Fatalf("ShowCloudlets as %s does not show the cloudlet", who)
		}
		if len(cl.GetAccessVars()) != 0 {
			t.Errorf("ShowCloudlets as %s shows access variables %v", who, slices.Sorted(maps.Keys(cl.GetAccessVars())))
		}
		cls, err := controllertest.Collect(edgeproto.NewCloudletServiceClient(conn).ShowCloudlets(ctx, &edgeproto.ShowCloudletsRequest{}))
		if err != nil {
			t.Fatal(err)
		}
		infos, err := controllertest.Collect(edgeproto.NewCloudletServiceClient(conn).ShowCloudletInfos(ctx, &edgeproto.ShowCloudletInfosRequest{}))
		if err != nil {
			t.Fatal(err)
		}
		var all strings.Builder
		for _, m := range cls {
			fmt.Fprintf(&all, "%v\n%s\n", m, protojson.Format(m))
		}
		for _, m := range infos {
			fmt.Fprintf(&all, "%v\n%s\n", m, protojson.Format(m))
		}
		e.noSecret(t, "ShowCloudlets and ShowCloudletInfos as "+who, all.String())
		for _, kind := range []string{"cloudlets", "cloudletinfos"} {
			for _, o := range []string{"table", "json", "yaml"} {
				out := e.edgectl(t, ctx, map[string]string{"admin": e.admin, "the operator": e.op}[who], "show", kind, "-o", o)
				if !strings.Contains(out, e.cloudlet.Name) {
					t.Errorf("edgectl show %s -o %s as %s does not show the cloudlet:\n%s", kind, o, who, out)
				}
				e.noSecret(t, "edgectl show "+kind+" -o "+o+" as "+who, out)
			}
		}
	}

	// The status page: its HTML, a new stream's snapshot, and every event
	// of the stream followed since before the cloudlet was created.
	e.noSecret(t, "the status page's HTML", httpGet(t, ctx, http.DefaultClient, "http://"+e.ctrl.MetricsAddr+"/ui/"))
	for who, tok := range map[string]string{"admin": e.admin, "the operator": e.op} {
		page := uitest.NewClient(t, "http://"+e.ctrl.MetricsAddr+"/ui/", nil)
		page.Login(tok)
		st := page.Open()
		snap := st.Next(10 * time.Second)
		if !strings.Contains(snap, e.cloudlet.Name) {
			t.Errorf("the status page's snapshot for %s does not show the cloudlet: %s", who, snap)
		}
		e.noSecret(t, "the status page's snapshot for "+who, snap)
		st.Close()
	}
	events := e.events.Received()
	if len(events) < 2 {
		t.Errorf("the status page's stream sent %d events while the cloudlet lived: searching them proves little", len(events))
	}
	e.noSecret(t, "the status page's events", strings.Join(events, "\n"))

	e.noSecret(t, "the progress answered to the changes", e.progress.String())
	e.noSecret(t, "the controller's /metrics", httpGet(t, ctx, http.DefaultClient, "http://"+e.ctrl.MetricsAddr+"/metrics"))
	e.noSecret(t, "the CRM's /metrics", httpGet(t, ctx, http.DefaultClient, "http://"+e.crm.MetricsAddr+"/metrics"))
	e.noSecret(t, "the controller's log", e.ctrlLog.String())
	e.noSecret(t, "the CRM's log", e.crmLog.String())
}

// want fails t unless the change of step ended without an error in s; it
// keeps the change's progress for searchSecrets.
func (e *k8sEdge) want(t *testing.T, step string, ps []*edgeproto.Progress, err error, s edgeproto.TrackedState) {
	t.Helper()
	fmt.Fprintf(&e.progress, "%v\n", ps)
	if err != nil {
		t.Fatalf("%s: %v (%v)", step, err, ps)
	}
	if got := controllertest.Final(ps); got != s {
		t.Fatalf("%s ended in %v, want %v (%v)", step, got, s, ps)
	}
}

// A crm_on_edge cloudlet of the kubernetes platform, its kubeconfig in
// its access variables: the CRM on the site receives it from the
// controller, initialises the cloudlet with it and drives the cluster the
// way the CCRM does. A cluster (a namespace) and an image App's instance
// (a Deployment READY when kwok runs its pod) are created, the image is
// rolled out by an update, and both are deleted, each step seen through
// the controller's Show and on the cluster. Then the kubeconfig, with
// markers planted in it, is searched for everywhere it must never be.
func TestKubernetesCloudletOnTheEdge(t *testing.T) {
	t.Setenv("KUBERNETES_SERVICE_HOST", "") // the CRM runs outside a cluster: no in-cluster configuration
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	e := newK8sEdge(t, ctx)
	ready, done := edgeproto.TrackedState_TRACKED_STATE_READY, edgeproto.TrackedState_TRACKED_STATE_DELETE_DONE
	apps := edgeproto.NewAppServiceClient(e.devC)
	clusters := edgeproto.NewClusterInstServiceClient(e.devC)
	insts := edgeproto.NewAppInstServiceClient(e.devC)

	// The operator replaces the kubeconfig: the CRM initialises the
	// cloudlet again with the new one. One of a user without permissions
	// fails naming what it lacks (so the new kubeconfig is the one in
	// use); then one that may do everything; then none, and that one again.
	cloudlets := edgeproto.NewCloudletServiceClient(e.opC)
	update := func(kc []byte) error {
		cl := &edgeproto.Cloudlet{Key: e.cloudlet}
		if kc != nil {
			cl.AccessVars = map[string]string{kubernetes.AccessVarKubeconfig: string(kc)}
		}
		ps, err := controllertest.Drain(cloudlets.UpdateCloudlet(ctx, &edgeproto.UpdateCloudletRequest{Cloudlet: cl,
			Fields: []string{edgeproto.CloudletFieldAccessVars}}))
		fmt.Fprintf(&e.progress, "%v\n", ps)
		return err
	}
	err := update(plantedKubeconfig(t, e.env, &e.secrets, "edgekit-e2e-crm-nobody"))
	if err == nil || !strings.Contains(err.Error(), kubernetes.ErrForbidden.Error()) {
		t.Fatalf("update to a kubeconfig without permissions: %v, want %q", err, kubernetes.ErrForbidden)
	}
	e.noSecret(t, "the error of the update to a kubeconfig without permissions", err.Error())
	if cl := e.showCloudlet(t, ctx, e.opC); cl.GetState() != edgeproto.TrackedState_TRACKED_STATE_UPDATE_ERROR ||
		!strings.Contains(strings.Join(cl.GetErrors(), "; "), kubernetes.ErrForbidden.Error()) {
		t.Fatalf("the cloudlet after the update to a kubeconfig without permissions is %v (%q), want UPDATE_ERROR naming the permissions",
			cl.GetState(), cl.GetErrors())
	}
	admin := plantedKubeconfig(t, e.env, &e.secrets, "edgekit-e2e-crm-admin", "system:masters")
	if err := update(admin); err != nil {
		t.Fatalf("update to a kubeconfig of an admin: %v", err)
	}
	// Without a kubeconfig (the CRM runs outside a cluster) the update
	// fails naming the variable: the CRM does not go on with the
	// credentials it was given before.
	if err := update(nil); err == nil || !strings.Contains(err.Error(), "has no access variable "+kubernetes.AccessVarKubeconfig) {
		t.Fatalf("update removing the kubeconfig: %v, want an error naming %s", err, kubernetes.AccessVarKubeconfig)
	}
	if err := update(admin); err != nil {
		t.Fatalf("update to the kubeconfig of an admin again: %v", err)
	}
	if st := e.showCloudlet(t, ctx, e.opC).GetState(); st != ready {
		t.Fatalf("the cloudlet after the update to a kubeconfig of an admin is %v, want READY", st)
	}

	app := &edgeproto.App{Key: &edgeproto.AppKey{Organization: "developer", Name: "img", Version: "1"},
		Deployment: kubernetes.PlatformType, ImageType: edgeproto.ImageType_IMAGE_TYPE_DOCKER, ImagePath: "registry.example/web:1",
		Ports: []*edgeproto.Port{{Proto: edgeproto.PortProtocol_PORT_PROTOCOL_TCP, InternalPort: 8080}}}
	if _, err := apps.CreateApp(ctx, &edgeproto.CreateAppRequest{App: app}); err != nil {
		t.Fatal(err)
	}

	// A cluster: a namespace of the cloudlet's cluster.
	ck := &edgeproto.ClusterKey{Organization: "developer", Name: "c1"}
	ps, err := controllertest.Drain(clusters.CreateClusterInst(ctx, &edgeproto.CreateClusterInstRequest{ClusterInst: &edgeproto.ClusterInst{
		Key: ck, CloudletKey: e.cloudlet, Deployment: kubernetes.PlatformType,
		NodePools: []*edgeproto.NodePool{{Name: "pool", NumNodes: 1, NodeResources: &edgeproto.NodeResources{Vcpus: 2, RamMb: 2048}}}}}))
	e.want(t, "create cluster", ps, err, ready)
	if got := e.showCluster(t, ctx, ck).GetState(); got != ready {
		t.Errorf("ShowClusterInsts shows the cluster %v after its create, want READY", got)
	}
	nss := e.namespaces(t, ctx)
	if len(nss) != 1 {
		t.Fatalf("namespaces of the cloudlet after the cluster's create: %v, want one", nss)
	}

	// An instance of the image App: READY once its pod runs.
	ak := &edgeproto.AppInstKey{Organization: "developer", Name: "web"}
	ps, err = controllertest.Drain(insts.CreateAppInst(ctx, &edgeproto.CreateAppInstRequest{AppInst: &edgeproto.AppInst{
		Key: ak, AppKey: app.Key, ClusterKey: ck}}))
	e.want(t, "create instance", ps, err, ready)
	if got := e.showAppInst(t, ctx, ak).GetState(); got != ready {
		t.Errorf("ShowAppInsts shows the instance %v after its create, want READY", got)
	}
	deps := e.deployments(t, ctx, ak.Name)
	if len(deps) != 1 || !strings.HasPrefix(deps[0], nss[0]+"/") {
		t.Fatalf("deployments of %s: %v, want one in namespace %s", ak.Name, deps, nss[0])
	}
	ns, name, _ := strings.Cut(deps[0], "/")
	dep, err := e.cs.AppsV1().Deployments(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if dep.Status.ReadyReplicas != 1 {
		t.Errorf("the Deployment has %d ready replicas when the instance is READY, want 1", dep.Status.ReadyReplicas)
	}
	pods, err := e.cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: kubernetes.LabelManagedBy + "=edgekit"})
	if err != nil {
		t.Fatal(err)
	}
	if len(pods.Items) != 1 || pods.Items[0].Status.Phase != "Running" {
		t.Errorf("pods of the instance: %d, want one Running", len(pods.Items))
	}

	// A new image, rolled out by an update of the instance.
	if _, err := apps.UpdateApp(ctx, &edgeproto.UpdateAppRequest{App: &edgeproto.App{Key: app.Key, ImagePath: "registry.example/web:2"},
		Fields: []string{edgeproto.AppFieldImagePath}}); err != nil {
		t.Fatal(err)
	}
	ps, err = controllertest.Drain(insts.UpdateAppInst(ctx, &edgeproto.UpdateAppInstRequest{AppInst: &edgeproto.AppInst{
		Key: ak, Annotations: map[string]string{"rollout": "2"}}, Fields: []string{edgeproto.AppInstFieldAnnotations}}))
	e.want(t, "update instance", ps, err, ready)
	if got := e.showAppInst(t, ctx, ak); got.GetState() != ready || got.GetAnnotations()["rollout"] != "2" {
		t.Errorf("ShowAppInsts shows the instance %v with annotations %v after its update, want READY with rollout=2",
			got.GetState(), got.GetAnnotations())
	}
	if dep, err = e.cs.AppsV1().Deployments(ns).Get(ctx, name, metav1.GetOptions{}); err != nil {
		t.Fatal(err)
	}
	if img := dep.Spec.Template.Spec.Containers[0].Image; img != "registry.example/web:2" {
		t.Errorf("image after the update %q, want registry.example/web:2", img)
	}
	if dep.Status.UpdatedReplicas != 1 || dep.Status.ReadyReplicas != 1 {
		t.Errorf("deployment status after the rollout %+v, want 1 updated and ready", dep.Status)
	}

	// The CRM restarts while the instance changes: the new process (a
	// platform that never saw the cloudlet) gets the kubeconfig from the
	// controller again and rolls the next image out.
	e.stopCRM()
	if _, err := apps.UpdateApp(ctx, &edgeproto.UpdateAppRequest{App: &edgeproto.App{Key: app.Key, ImagePath: "registry.example/web:3"},
		Fields: []string{edgeproto.AppFieldImagePath}}); err != nil {
		t.Fatal(err)
	}
	if _, err := controllertest.Drain(insts.UpdateAppInst(ctx, &edgeproto.UpdateAppInstRequest{NoWait: true, AppInst: &edgeproto.AppInst{
		Key: ak, Annotations: map[string]string{"rollout": "3"}}, Fields: []string{edgeproto.AppInstFieldAnnotations}})); err != nil {
		t.Fatal(err)
	}
	e.startCRM(t, ctx)
	controllertest.WaitFor(t, 60*time.Second, "the instance READY after its update while the CRM was down", func() bool {
		got := e.showAppInst(t, ctx, ak)
		return got.GetState() == ready && got.GetAnnotations()["rollout"] == "3"
	})
	if dep, err = e.cs.AppsV1().Deployments(ns).Get(ctx, name, metav1.GetOptions{}); err != nil {
		t.Fatal(err)
	}
	if img := dep.Spec.Template.Spec.Containers[0].Image; img != "registry.example/web:3" {
		t.Errorf("image after the update while the CRM was down %q, want registry.example/web:3", img)
	}

	// Delete: the Deployment and the namespace go.
	ps, err = controllertest.Drain(insts.DeleteAppInst(ctx, &edgeproto.DeleteAppInstRequest{Key: ak}))
	e.want(t, "delete instance", ps, err, done)
	if got := e.showAppInst(t, ctx, ak); got != nil {
		t.Errorf("ShowAppInsts shows the instance (%v) after its delete", got.GetState())
	}
	if deps := e.deployments(t, ctx, ak.Name); len(deps) != 0 {
		t.Errorf("deployments of %s after its delete: %v, want none", ak.Name, deps)
	}
	ps, err = controllertest.Drain(clusters.DeleteClusterInst(ctx, &edgeproto.DeleteClusterInstRequest{Key: ck}))
	e.want(t, "delete cluster", ps, err, done)
	if got := e.showCluster(t, ctx, ck); got != nil {
		t.Errorf("ShowClusterInsts shows the cluster (%v) after its delete", got.GetState())
	}
	if nss := e.namespaces(t, ctx); len(nss) != 0 {
		t.Errorf("namespaces of the cloudlet after the cluster's delete: %v, want none", nss)
	}

	// The kubeconfig reached the CRM (it drove the cluster with it) and
	// shows nowhere.
	e.searchSecrets(t, ctx)
}
