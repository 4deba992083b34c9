package allocator_test

import (
	"context"
	"log/slog"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/edgekit/edgekit/fluidos"
	"github.com/edgekit/edgekit/hosts/fluidos/allocator"
	"github.com/edgekit/edgekit/hosts/fluidos/provider"
	"github.com/edgekit/edgekit/internal/kvservice"
	"github.com/edgekit/edgekit/internal/store"
	"github.com/edgekit/edgekit/internal/testenv/etcdtest"
	"github.com/edgekit/edgekit/platforms/fake"
)

const seller = "seller"

// kvBlueprint sells a kv service whose buyer chooses its password; its
// app's environment names the allocation (what templates see).
func kvBlueprint() *fluidos.ServiceBlueprint {
	bp := kvservice.Blueprint("kv", 0)
	bp.Templates[0].Body = strings.Replace(bp.Templates[0].Body, "env_vars:", "env_vars:\n- name: KV_ALLOCATION\n  value: {{ .Allocation | json }}", 1)
	return bp
}

// env is a provider selling on a fake platform, provisioning through an
// allocator, on one etcd.
type env struct {
	t     testing.TB
	etcd  *etcdtest.Server
	store *store.Store
	plat  *fake.Platform
	image string
	cfg   allocator.Config
	prov  *provider.Provider
	alloc *allocator.Allocator
	stop  func()
	poll  time.Duration // between two looks at an allocation
}

type envOption func(*allocator.Config, *provider.Config)

func newEnv(t testing.TB, opts ...envOption) *env {
	t.Helper()
	e := &env{t: t, etcd: etcdtest.New(t), plat: fake.New(fake.Options{}), poll: 10 * time.Millisecond}
	var err error
	if e.store, err = store.New(e.etcd.Client(), seller); err != nil {
		t.Fatal(err)
	}
	if e.image, err = os.Executable(); err != nil {
		t.Fatal(err)
	}
	if _, err := store.NewKind[*fluidos.ServiceBlueprint](e.store).Create(context.Background(), kvBlueprint()); err != nil {
		t.Fatal(err)
	}
	e.start(opts...)
	return e
}

// start starts (or starts again) the provider and its allocator.
func (e *env) start(opts ...envOption) {
	e.t.Helper()
	self := &fluidos.NodeIdentity{NodeId: seller, Ip: "127.0.0.1:7443"}
	acfg := allocator.Config{
		Self: self, Store: e.store, Platform: e.plat, Images: map[string]string{"kv": e.image},
		HealthInterval: 100 * time.Millisecond, OperationTimeout: 10 * time.Second, StopTimeout: time.Second,
		Logger: testLogger(),
	}
	pcfg := provider.Config{
		Self: self, Store: e.store,
		Capacity: provider.CapacityFunc(func(context.Context) (provider.Capacity, error) {
			return provider.Capacity{Architecture: "amd64", CPU: 4000, Memory: 8 << 30, Pods: 40, Storage: 20 << 30}, nil
		}),
		Policy: &fluidos.Partitionability{CpuMin: 500, MemoryMin: 256 << 20, PodsMin: 1, CpuStep: 250, MemoryStep: 256 << 20, PodsStep: 1},
	}
	for _, o := range opts {
		o(&acfg, &pcfg)
	}
	if pcfg.ContractTerm == 0 {
		// These tests' buyers are the tests, which renew when they mean to:
		// a contract lasts its lease from its purchase on too.
		pcfg.ContractTerm = pcfg.ContractLease
	}
	var err error
	if e.alloc, err = allocator.New(acfg); err != nil {
		e.t.Fatal(err)
	}
	pcfg.Allocator = e.alloc
	if e.prov, err = provider.New(pcfg); err != nil {
		e.t.Fatal(err)
	}
	e.alloc.SetLedger(e.prov)
	if err := e.prov.Sync(context.Background()); err != nil {
		e.t.Fatal(err)
	}
	e.cfg = acfg
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { _ = e.prov.Start(ctx) })
	wg.Go(func() {
		if err := e.alloc.Start(ctx); err != nil {
			e.t.Errorf("allocator: %v", err)
		}
	})
	var once sync.Once
	e.stop = func() { once.Do(func() { cancel(); wg.Wait() }) }
	e.t.Cleanup(e.stop)
}

func (e *env) restart(opts ...envOption) {
	e.t.Helper()
	e.stop()
	e.start(opts...)
}

func ctxT(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// buy reserves and buys cfg of a flavor for node alice.
func (e *env) buy(flavor string, cfg *fluidos.Configuration) *fluidos.Contract {
	e.t.Helper()
	ctx := ctxT(e.t)
	tx, err := e.prov.Reserve(ctx, "", &fluidos.ReserveRequest{FlavorId: flavor, Buyer: &fluidos.NodeIdentity{NodeId: "alice"}, Configuration: cfg})
	if err != nil {
		e.t.Fatal(err)
	}
	c, err := e.prov.Purchase(ctx, "", tx.GetId(), &fluidos.PurchaseRequest{})
	if err != nil {
		e.t.Fatal(err)
	}
	return c
}

// waitAllocation polls the allocation of contract c until cond holds.
func (e *env) waitAllocation(c *fluidos.Contract, what string, cond func(a *fluidos.Allocation) bool) *fluidos.Allocation {
	e.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	var a *fluidos.Allocation
	for {
		var err error
		a, _, err = e.prov.Allocations().Get(ctxT(e.t), provider.AllocationID(c.GetId()))
		if err != nil {
			e.t.Fatal(err)
		}
		if cond(a) {
			return a
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("allocation of %s not %s in time: %v", c.GetId(), what, a.GetStatus())
		}
		time.Sleep(e.poll)
	}
}

func state(s fluidos.AllocationState) func(a *fluidos.Allocation) bool {
	return func(a *fluidos.Allocation) bool { return a.GetStatus().GetState() == s }
}

func slice(cpu, mem, pods int64) *fluidos.Configuration {
	return &fluidos.Configuration{Spec: &fluidos.Configuration_K8Slice{K8Slice: &fluidos.K8SliceConfiguration{Cpu: cpu, Memory: mem, Pods: pods}}}
}

func service(params map[string]string) *fluidos.Configuration {
	return &fluidos.Configuration{Spec: &fluidos.Configuration_Service{Service: &fluidos.ServiceConfiguration{Parameters: params}}}
}

// clusterKeyOf is the key string of the cluster of an allocation.
func clusterKeyOf(a *fluidos.Allocation) string {
	return "name=" + a.GetId() + ",organization=" + a.GetBuyer().GetNodeId()
}

// counts are what the fake platform runs.
func (e *env) counts() (clusters, insts int) { return e.plat.Counts() }

func (e *env) flavor(id string) *fluidos.Flavor {
	e.t.Helper()
	f, err := e.prov.Flavor(ctxT(e.t), id)
	if err != nil {
		e.t.Fatal(err)
	}
	return f
}

func testLogger() *slog.Logger {
	if os.Getenv("ALLOCATOR_TEST_LOG") != "" {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return slog.New(slog.DiscardHandler)
}
