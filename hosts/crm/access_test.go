package crm_test

import (
	"errors"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/hosts/controller/controllertest"
	"github.com/edgekit/edgekit/hosts/controller/notify"
	"github.com/edgekit/edgekit/hosts/crm"
	"github.com/edgekit/edgekit/platforms/fake"
	notifyv1 "github.com/edgekit/edgekit/proto/edgekit/notify/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
)

func keys(m map[string]proto.Message) []string { return slices.Sorted(maps.Keys(m)) }

func TestAnotherCloudletsKeyIsRefused(t *testing.T) {
	t.Parallel()
	e := newEdge(t)
	ctx := testCtx(t)
	site2 := &edgeproto.CloudletKey{Organization: "operator", Name: "site2"}
	key2 := e.env.CreateEdgeCloudlet(ctx, &edgeproto.Cloudlet{Key: site2, PlatformType: fake.Name})
	for name, hello := range map[string]*notifyv1.Hello{
		"another cloudlet's key": {CloudletKey: e.cloudlet, AccessKey: key2},
		"no key":                 {CloudletKey: e.cloudlet},
		"unknown cloudlet":       {CloudletKey: &edgeproto.CloudletKey{Organization: "operator", Name: "nope"}, AccessKey: e.key},
	} {
		st := e.rawConnect(t, hello.GetCloudletKey(), hello.GetAccessKey())
		if _, err := st.Recv(); status.Code(err) != codes.Unauthenticated {
			t.Errorf("%s: %v, want Unauthenticated", name, err)
		}
	}
	// A stream must start with a Hello.
	st, err := notifyv1.NewNotifyServiceClient(e.env.Conn("")).Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Send(&notifyv1.ConnectRequest{Msg: &notifyv1.ConnectRequest_Report{Report: &notifyv1.Report{}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Recv(); status.Code(err) != codes.InvalidArgument {
		t.Errorf("a Report before the Hello: %v, want InvalidArgument", err)
	}
}

func TestReportsOnAnotherCloudletAreRefused(t *testing.T) {
	t.Parallel()
	e := newEdge(t)
	ctx := testCtx(t)
	site2 := &edgeproto.CloudletKey{Organization: "operator", Name: "site2"}
	key2 := e.env.CreateEdgeCloudlet(ctx, &edgeproto.Cloudlet{Key: site2, PlatformType: fake.Name})
	other := &edge{env: e.env, cloudlet: site2, key: key2}
	other.startCRM(t, e.env.Addr, fake.New(fake.Options{}))
	waitState[*edgeproto.Cloudlet](t, e, site2, edgeproto.TrackedState_TRACKED_STATE_READY)
	c2 := other.cluster("c2")
	ps, err := controllertest.Drain(e.dev.clusters.CreateClusterInst(ctx, &edgeproto.CreateClusterInstRequest{ClusterInst: c2}))
	if err != nil || controllertest.Final(ps) != edgeproto.TrackedState_TRACKED_STATE_READY {
		t.Fatalf("create cluster on site2: %v %v", ps, err)
	}

	// site1's CRM reports on site2's cluster and on site2 itself.
	st := e.rawConnect(t, e.cloudlet, e.key)
	readUntil(t, st, isSyncEnd)
	reports := []*notifyv1.Report{
		{Seq: 1, Info: &notifyv1.Report_ClusterInstInfo{ClusterInstInfo: &edgeproto.ClusterInstInfo{Key: c2.Key,
			State: edgeproto.TrackedState_TRACKED_STATE_DELETE_DONE}}, Fields: []string{edgeproto.ClusterInstInfoFieldKey, edgeproto.ClusterInstInfoFieldState}},
		{Seq: 2, Info: &notifyv1.Report_CloudletInfo{CloudletInfo: &edgeproto.CloudletInfo{Key: site2,
			State: edgeproto.CloudletState_CLOUDLET_STATE_ERRORS}}, Fields: []string{edgeproto.CloudletInfoFieldKey, edgeproto.CloudletInfoFieldState}},
		{Seq: 3, Info: &notifyv1.Report_CloudletInfo{CloudletInfo: &edgeproto.CloudletInfo{Key: e.cloudlet}}, Fields: []string{"1", "99"}},
	}
	for _, r := range reports {
		if err := st.Send(&notifyv1.ConnectRequest{Msg: &notifyv1.ConnectRequest_Report{Report: r}}); err != nil {
			t.Fatal(err)
		}
	}
	acks := map[uint64]*notifyv1.ReportAck{}
	for len(acks) < len(reports) {
		m, err := st.Recv()
		if err != nil {
			t.Fatal(err)
		}
		if a := m.GetReportAck(); a != nil {
			acks[a.GetSeq()] = a
		}
	}
	for seq, a := range acks {
		if a.GetVerdict() != notifyv1.Verdict_VERDICT_REJECTED {
			t.Errorf("report %d: verdict %v (%s), want REJECTED", seq, a.GetVerdict(), a.GetReason())
		}
	}
	if got := get[*edgeproto.ClusterInst](t, e, c2.Key).GetState(); got != edgeproto.TrackedState_TRACKED_STATE_READY {
		t.Errorf("site2's cluster is %v after site1's report", got)
	}
	if got := get[*edgeproto.CloudletInfo](t, e, site2).GetState(); got != edgeproto.CloudletState_CLOUDLET_STATE_READY {
		t.Errorf("site2's CloudletInfo is %v after site1's report", got)
	}
}

func TestSecretsGoOnlyToTheCRMThatNeedsThem(t *testing.T) {
	t.Parallel()
	e := newEdge(t)
	ctx := testCtx(t)
	site2 := &edgeproto.CloudletKey{Organization: "operator", Name: "site2"}
	key2 := e.env.CreateEdgeCloudlet(ctx, &edgeproto.Cloudlet{Key: site2, PlatformType: fake.Name})
	c := e.startCRM(t, e.env.Addr, fake.New(fake.Options{}))
	waitState[*edgeproto.Cloudlet](t, e, e.cloudlet, edgeproto.TrackedState_TRACKED_STATE_READY)
	<-c.Synced()
	defer c.stop()
	if _, err := controllertest.Drain(e.dev.clusters.CreateClusterInst(ctx, &edgeproto.CreateClusterInstRequest{ClusterInst: e.cluster("c1")})); err != nil {
		t.Fatal(err)
	}
	secret := e.app("web")
	secret.EnvVars = []*edgeproto.EnvVar{{Name: "TOKEN", Secret: true, SecretValue: "s3cr3t"}}
	if _, err := e.dev.apps.CreateApp(ctx, &edgeproto.CreateAppRequest{App: secret}); err != nil {
		t.Fatal(err)
	}

	// site2's CRM is connected while site1 gets an instance of the App.
	st2 := e.rawConnect(t, site2, key2)
	synced2 := readUntil(t, st2, isSyncEnd)
	ps, err := controllertest.Drain(e.dev.appInsts.CreateAppInst(ctx, &edgeproto.CreateAppInstRequest{AppInst: e.appInst("i1", "web", "c1")}))
	if err != nil || controllertest.Final(ps) != edgeproto.TrackedState_TRACKED_STATE_READY {
		t.Fatalf("create instance: %v %v", ps, err)
	}
	// A flavor created afterwards is a barrier: the stream is in revision
	// order, so site2 has been sent whatever came before it.
	if _, err := e.admin.flavors.CreateFlavor(ctx, &edgeproto.CreateFlavorRequest{Flavor: &edgeproto.Flavor{
		Key: &edgeproto.FlavorKey{Name: "barrier"}, Vcpus: 1, RamMb: 1, DiskGb: 1}}); err != nil {
		t.Fatal(err)
	}
	later2 := readUntil(t, st2, func(m *notifyv1.ConnectResponse) bool {
		return m.GetUpdate().GetFlavor().GetKey().GetName() == "barrier"
	})
	for _, got := range []map[string]proto.Message{synced2, later2} {
		for id := range got {
			if strings.HasPrefix(id, "App/") || strings.HasPrefix(id, "AppInst/") || strings.HasPrefix(id, "ClusterInst/") {
				t.Errorf("site2's CRM was sent %s, which is site1's", id)
			}
		}
	}
	if _, ok := synced2["Cloudlet/"+(&edgeproto.Cloudlet{Key: site2}).GetKeyString()]; !ok {
		t.Errorf("site2's sync lacks its own cloudlet: %v", keys(synced2))
	}
	if _, ok := synced2["Flavor/name=fake.small"]; !ok {
		t.Errorf("site2's sync lacks the flavors: %v", keys(synced2))
	}

	// site1's CRM gets the App with its secret.
	c.stop()
	st1 := e.rawConnect(t, e.cloudlet, e.key)
	synced1 := readUntil(t, st1, isSyncEnd)
	app, _ := synced1["App/"+secret.GetKeyString()].(*edgeproto.App)
	if app == nil || len(app.EnvVars) != 1 || app.EnvVars[0].SecretValue != "s3cr3t" {
		t.Fatalf("site1's sync has App %v, want it with its secret", app)
	}
	for _, id := range []string{"ClusterInst/name=c1,organization=developer", "AppInst/name=i1,organization=developer"} {
		if synced1[id] == nil {
			t.Errorf("site1's sync lacks %s: %v", id, keys(synced1))
		}
	}
}

func TestASlowCRMIsCutOffNotBuffered(t *testing.T) {
	t.Parallel()
	env := controllertest.Start(t, controllertest.Options{Notify: true, Logger: testLogger(),
		NotifyConfig: notify.Config{KeepaliveInterval: time.Hour, MaxQueue: 64}})
	e := &edge{env: env, cloudlet: &edgeproto.CloudletKey{Organization: "operator", Name: "site1"}}
	e.op = e.clientsOf(env.OrgToken("operator"))
	ctx := testCtx(t)
	e.key = env.CreateEdgeCloudlet(ctx, &edgeproto.Cloudlet{Key: e.cloudlet, PlatformType: fake.Name})
	// A fixed flow-control window (no growth by bandwidth estimation), so
	// that a CRM that does not read soon stops the controller's sends.
	st := e.rawConnect(t, e.cloudlet, e.key, grpc.WithInitialWindowSize(1<<16), grpc.WithInitialConnWindowSize(1<<16))
	readUntil(t, st, isSyncEnd)
	// The CRM stops reading; its organization's trust policies keep
	// changing, far more than gRPC's flow-control window holds.
	policies := edgeproto.NewTrustPolicyServiceClient(env.Conn(env.OrgToken("operator")))
	rules := make([]*edgeproto.SecurityRule, 100) // about 2.5 KB a policy
	for i := range rules {
		rules[i] = &edgeproto.SecurityRule{Protocol: "tcp", PortRangeMin: uint32(1000 + i), PortRangeMax: uint32(2000 + i), RemoteCidr: "10.0.0.0/8"}
	}
	for i := range 200 {
		_, err := policies.CreateTrustPolicy(ctx, &edgeproto.CreateTrustPolicyRequest{TrustPolicy: &edgeproto.TrustPolicy{
			Key: &edgeproto.TrustPolicyKey{Organization: "operator", Name: "p" + strconv.Itoa(i)}, OutboundSecurityRules: rules}})
		if err != nil {
			t.Fatal(err)
		}
	}
	controllertest.WaitFor(t, 20*time.Second, "the slow stream to be dropped", func() bool { return env.Notify.Sessions() == 0 })
	var err error
	for err == nil {
		_, err = st.Recv()
	}
	if status.Code(err) != codes.ResourceExhausted || errors.Is(err, io.EOF) {
		t.Fatalf("slow stream ended with %v, want ResourceExhausted", err)
	}
}

// A CRM started from a key file picks up a rotated key written into the
// file, without a restart: the controller refuses the old key, the CRM
// reads the file again and reconnects with the new one.
func TestARotatedKeyIsReadAgainFromItsFile(t *testing.T) {
	t.Parallel()
	e, px, p, first := readyEdge(t)
	first.stop()
	ctx := testCtx(t)
	file := filepath.Join(t.TempDir(), "access.key")
	if err := os.WriteFile(file, []byte(e.key+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	// Another CRM process, reading its key from the file.
	c := e.startCRM(t, px.Addr(), p, func(cfg *crm.Config) { cfg.AccessKeyFile = file })
	select {
	case <-c.Synced():
	case <-ctx.Done():
		t.Fatal("the CRM never synced")
	}
	resp, err := e.op.cloudlets.RotateCloudletAccessKey(ctx, &edgeproto.RotateCloudletAccessKeyRequest{Key: e.cloudlet})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, []byte(resp.GetCrmAccessKey()), 0o600); err != nil {
		t.Fatal(err)
	}
	// The CRM serves again: an instance is created through it.
	ai := e.appInst("after-rotation", "web", "c1")
	ps, err := controllertest.Drain(e.dev.appInsts.CreateAppInst(ctx, &edgeproto.CreateAppInstRequest{AppInst: ai}))
	if err != nil || controllertest.Final(ps) != edgeproto.TrackedState_TRACKED_STATE_READY {
		t.Fatalf("create after the rotation: %v %v", ps, err)
	}
}
