package allocator_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/fluidos"
	"github.com/edgekit/edgekit/hosts/fluidos/allocator"
	"github.com/edgekit/edgekit/hosts/fluidos/provider"
	"github.com/edgekit/edgekit/internal/kvservice"
	"github.com/edgekit/edgekit/internal/store"
	"github.com/edgekit/edgekit/platforms/fake"
	"github.com/edgekit/edgekit/platforms/local"
)

func TestSliceIsAClusterOfThePartitionAndGoesBackOnSale(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := ctxT(t)
	flavor := provider.K8SliceFlavorID(seller)
	c := e.buy(flavor, slice(1500, 1<<30, 10))
	a := e.waitAllocation(c, "ACTIVE", state(fluidos.AllocationState_ALLOCATION_STATE_ACTIVE))
	cr := a.GetCredentials()
	if cr.GetToken() == "" || len(cr.GetToken()) != 64 || cr.GetEndpoint() != "127.0.0.1:7443" || cr.GetClusterId() != a.GetId() {
		t.Errorf("slice credentials %v", cr)
	}
	if a.GetResources().GetCluster() != clusterKeyOf(a) || a.GetStatus().GetTask() != "" || a.GetStatus().GetLastHealthyTime() == nil {
		t.Errorf("active slice %v", a)
	}
	ci, ok := e.plat.Cluster(clusterKeyOf(a))
	if !ok {
		t.Fatalf("the platform has no cluster %s", clusterKeyOf(a))
	}
	np := ci.GetNodePools()
	if len(np) != 1 || np[0].GetNodeResources().GetOptResMap()[local.OptResCPU] != "1500m" ||
		np[0].GetNodeResources().GetOptResMap()[local.OptResMemory] != "1Gi" || np[0].GetNodeResources().GetOptResMap()[local.OptResPods] != "10" ||
		np[0].GetNodeResources().GetVcpus() != 2 {
		t.Errorf("the slice's cluster is not sized to the partition: %v", np)
	}

	if _, err := e.prov.Release(ctx, "alice", c.GetId(), ""); err != nil {
		t.Fatal(err)
	}
	a = e.waitAllocation(c, "RELEASED", state(fluidos.AllocationState_ALLOCATION_STATE_RELEASED))
	if a.GetCredentials() != nil || a.GetStatus().GetMessage() != "released: released by its buyer" {
		t.Errorf("released allocation %v", a)
	}
	if clusters, insts := e.counts(); clusters != 0 || insts != 0 {
		t.Errorf("the platform still runs %d clusters and %d instances", clusters, insts)
	}
	if f := e.flavor(flavor); f.GetK8Slice().GetCharacteristics().GetCpu() != 4000 {
		t.Errorf("the partition is not back on sale: %v", f.GetK8Slice().GetCharacteristics())
	}
	cs, _, err := store.NewKind[*edgeproto.ClusterInst](e.store).List(ctx)
	if err != nil || len(cs) != 0 {
		t.Errorf("engine objects left in the store: %v, %v", cs, err)
	}
}

func TestServiceRenderedFromItsBlueprint(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := ctxT(t)
	c := e.buy(provider.ServiceFlavorID(seller, "kv"), service(map[string]string{"username": "bob", "password": "planted-secret-1"}))
	a := e.waitAllocation(c, "ACTIVE", state(fluidos.AllocationState_ALLOCATION_STATE_ACTIVE))
	cr := a.GetCredentials()
	if cr.GetUsername() != "bob" || cr.GetPassword() != "planted-secret-1" || !strings.HasPrefix(cr.GetEndpoint(), "http://") {
		t.Errorf("service credentials %v", cr)
	}
	app, _, err := store.NewKind[*edgeproto.App](e.store).Get(ctx, a.GetResources().GetApp())
	if err != nil {
		t.Fatal(err)
	}
	if app.GetCommand() != e.image || len(app.GetArgs()) != 0 || len(app.GetEnvVars()) == 0 ||
		app.GetEnvVars()[0].GetName() != "KV_ALLOCATION" || app.GetEnvVars()[0].GetValue() != a.GetId() {
		t.Errorf("rendered app %v %v %v", app.GetCommand(), app.GetArgs(), app.GetEnvVars())
	}
	var secret *edgeproto.EnvVar
	for _, ev := range app.GetEnvVars() {
		if ev.GetName() == "KV_PASSWORD" {
			secret = ev
		}
	}
	if secret == nil || !secret.GetSecret() || secret.GetSecretValue() != "planted-secret-1" || secret.GetValue() != "" {
		t.Errorf("the password is not a secret variable: %v", secret)
	}
	if st, ok := e.plat.AppInst(a.GetResources().GetAppInst()); !ok || st.Power != edgeproto.PowerState_POWER_STATE_POWER_ON {
		t.Errorf("the platform runs no instance %s: %v", a.GetResources().GetAppInst(), st)
	}
	if _, err := e.prov.Release(ctx, "alice", c.GetId(), "done"); err != nil {
		t.Fatal(err)
	}
	e.waitAllocation(c, "RELEASED", state(fluidos.AllocationState_ALLOCATION_STATE_RELEASED))
	if clusters, insts := e.counts(); clusters != 0 || insts != 0 {
		t.Errorf("the platform still runs %d clusters and %d instances", clusters, insts)
	}
	if apps, _, _ := store.NewKind[*edgeproto.App](e.store).List(ctx); len(apps) != 0 {
		t.Errorf("apps left: %d", len(apps))
	}
}

func TestFailedCreateEndsErrorAndReleases(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.plat.Inject(fake.Fault{Op: fake.OpCreateAppInst, Err: errors.New("disk full")})
	flavor := provider.ServiceFlavorID(seller, "kv")
	c := e.buy(flavor, service(map[string]string{"password": "abcdefgh-1"}))
	a := e.waitAllocation(c, "ERROR", state(fluidos.AllocationState_ALLOCATION_STATE_ERROR))
	if len(a.GetStatus().GetErrors()) != 1 || !strings.Contains(a.GetStatus().GetErrors()[0], "disk full") ||
		!strings.HasPrefix(a.GetReleaseReason(), "provisioning failed") {
		t.Errorf("failed allocation %v", a)
	}
	if clusters, insts := e.counts(); clusters != 0 || insts != 0 {
		t.Errorf("a failed allocation left %d clusters and %d instances", clusters, insts)
	}
	sold, err := e.prov.Contract(ctxT(t), c.GetId())
	if err != nil || sold.GetState() != fluidos.ContractState_CONTRACT_STATE_RELEASED {
		t.Errorf("contract of a failed allocation: %v, %v", sold.GetState(), err)
	}
	if f := e.flavor(flavor); f.GetService().GetSoldInstances() != 0 {
		t.Errorf("the instance of a failed allocation is still sold: %v", f.GetService())
	}
}

func TestAdmissionRefusesWhatCannotBeProvisioned(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := ctxT(t)
	svc := e.flavor(provider.ServiceFlavorID(seller, "kv"))
	for _, c := range []struct {
		name string
		f    *fluidos.Flavor
		cfg  *fluidos.Configuration
		want string
	}{
		{"consumer hosting", svc, &fluidos.Configuration{Spec: &fluidos.Configuration_Service{Service: &fluidos.ServiceConfiguration{
			Parameters: map[string]string{"password": "abcdefgh-1"}, HostingPolicy: fluidos.HostingPolicy_HOSTING_POLICY_CONSUMER}}}, "hosting policy Consumer"},
		{"bad configuration", svc, service(map[string]string{"password": "short"}), "password"},
		{"vm", &fluidos.Flavor{Spec: &fluidos.Flavor_Vm{Vm: &fluidos.VM{Cpu: 1000}}}, nil, "not virtual machines"},
		{"sensor", &fluidos.Flavor{Spec: &fluidos.Flavor_Sensor{Sensor: &fluidos.Sensor{SensorType: "temperature"}}}, nil, "no sensor data endpoint"},
	} {
		err := e.alloc.Admit(ctx, c.f, c.cfg)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want a refusal saying %q", c.name, err, c.want)
		}
	}
	shared := &fluidos.Configuration{Spec: &fluidos.Configuration_Service{Service: &fluidos.ServiceConfiguration{
		Parameters: map[string]string{"password": "abcdefgh-1"}, HostingPolicy: fluidos.HostingPolicy_HOSTING_POLICY_SHARED}}}
	if err := e.alloc.Admit(ctx, svc, shared); err != nil {
		t.Errorf("Shared hosting: %v", err)
	}
	if err := e.alloc.Admit(ctx, e.flavor(provider.K8SliceFlavorID(seller)), slice(500, 256<<20, 1)); err != nil {
		t.Errorf("a slice: %v", err)
	}
}

func TestTemplateErrorsNeverQuoteTheConfiguration(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := ctxT(t)
	bp := kvBlueprint()
	bp.Id = "leaky"
	// The password lands where an integer is expected: the parser's
	// error quotes what it got.
	bp.Templates[0].Body = "command: {{ image \"kv\" | json }}\nports:\n- internal_port: {{ .Config.password | json }}\n"
	if _, err := store.NewKind[*fluidos.ServiceBlueprint](e.store).Create(ctx, bp); err != nil {
		t.Fatal(err)
	}
	if err := e.prov.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	err := e.alloc.Admit(ctx, e.flavor(provider.ServiceFlavorID(seller, "leaky")), service(map[string]string{"password": "planted-secret-9"}))
	if err == nil {
		t.Fatal("a template that renders what is not an App was admitted")
	}
	if strings.Contains(err.Error(), "planted-secret-9") || !strings.Contains(err.Error(), "[redacted]") {
		t.Errorf("the error quotes the configuration: %v", err)
	}
	bp.Id, bp.Templates[0].Body = "noimage", "command: /bin/sh\n"
	if _, err := store.NewKind[*fluidos.ServiceBlueprint](e.store).Create(ctx, bp); err != nil {
		t.Fatal(err)
	}
	if err := e.prov.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	err = e.alloc.Admit(ctx, e.flavor(provider.ServiceFlavorID(seller, "noimage")), service(map[string]string{"password": "abcdefgh-1"}))
	if err == nil || !strings.Contains(err.Error(), "catalog") {
		t.Errorf("a command outside the catalog: %v", err)
	}
}

func TestAllocationResumesAfterARestartMidProvisioning(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	gate := e.plat.Pause(fake.OpCreateAppInst, "")
	c := e.buy(provider.ServiceFlavorID(seller, "kv"), service(map[string]string{"password": "abcdefgh-1"}))
	select {
	case <-gate.Reached():
	case <-time.After(30 * time.Second):
		t.Fatal("the service's instance was never created")
	}
	a := e.waitAllocation(c, "creating its resources", state(fluidos.AllocationState_ALLOCATION_STATE_RESOURCE_CREATION))
	if a.GetStatus().GetTask() != "Creating AppInst" {
		t.Errorf("the engine's task is not in the allocation: %v", a.GetStatus())
	}
	// The node stops while the create is stuck: it is cancelled after the
	// stop timeout, and recorded as still to do, not failed.
	e.stop()
	gate.Release()
	inst, _, err := store.NewKind[*edgeproto.AppInst](e.store).Get(ctxT(t), "name="+a.GetId()+",organization=alice")
	if err != nil {
		t.Fatal(err)
	}
	if inst.GetState() != edgeproto.TrackedState_TRACKED_STATE_CREATE_REQUESTED {
		t.Errorf("an instance whose create the stop cancelled is %s, want CREATE_REQUESTED", inst.GetState())
	}
	e.start()
	e.waitAllocation(c, "ACTIVE after the restart", state(fluidos.AllocationState_ALLOCATION_STATE_ACTIVE))
	if _, insts := e.counts(); insts != 1 {
		t.Errorf("%d instances after the restart, want 1", insts)
	}
}

func TestContractExpiryTearsDown(t *testing.T) {
	t.Parallel()
	// The contract lasts its term (an hour) until its buyer renews it once
	// the slice is ACTIVE; from then on it lasts a lease of 500ms, which
	// the buyer lets lapse.
	e := newEnv(t, func(_ *allocator.Config, p *provider.Config) {
		p.ContractLease, p.ContractTerm = 500*time.Millisecond, time.Hour
	})
	c := e.buy(provider.K8SliceFlavorID(seller), slice(500, 256<<20, 1))
	e.waitAllocation(c, "ACTIVE", state(fluidos.AllocationState_ALLOCATION_STATE_ACTIVE))
	if _, err := e.prov.Renew(ctxT(t), "", c.GetId()); err != nil {
		t.Fatal(err)
	}
	a := e.waitAllocation(c, "RELEASED once its lease lapsed", state(fluidos.AllocationState_ALLOCATION_STATE_RELEASED))
	if !strings.Contains(a.GetReleaseReason(), "without a renewal") {
		t.Errorf("release reason %q", a.GetReleaseReason())
	}
	if a.GetStatus().GetLastHealthyTime() == nil {
		t.Error("the slice was released before it was ever ACTIVE")
	}
	if clusters, _ := e.counts(); clusters != 0 {
		t.Errorf("%d clusters left", clusters)
	}
}

// TestTheDocumentedBlueprintRenders: the kv blueprint of the docs
// (internal/kvservice/blueprint.yaml, which the operator guide runs) is admitted with a valid configuration and refused with one
// its schema refuses.
func TestTheDocumentedBlueprintRenders(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := ctxT(t)
	bp := kvservice.Blueprint("documented", 2) // internal/kvservice/blueprint.yaml
	if _, err := store.NewKind[*fluidos.ServiceBlueprint](e.store).Create(ctx, bp); err != nil {
		t.Fatal(err)
	}
	if err := e.prov.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	f := e.flavor(provider.ServiceFlavorID(seller, "documented"))
	if err := e.alloc.Admit(ctx, f, service(map[string]string{"password": "open-sesame-42"})); err != nil {
		t.Errorf("the documented blueprint: %v", err)
	}
	if err := e.alloc.Admit(ctx, f, service(map[string]string{"password": "short"})); err == nil {
		t.Error("a password the schema refuses was admitted")
	}
}
