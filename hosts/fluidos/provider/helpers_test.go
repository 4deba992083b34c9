package provider_test

import (
	"context"
	"crypto/tls"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/edgekit/edgekit/fluidos"
	"github.com/edgekit/edgekit/fluidos/rear"
	"github.com/edgekit/edgekit/hosts/fluidos/provider"
	"github.com/edgekit/edgekit/internal/devtls"
	"github.com/edgekit/edgekit/internal/store"
	"github.com/edgekit/edgekit/internal/testenv/etcdtest"
)

const seller = "seller"

// testCapacity is the capacity every test provider sells: 4 CPUs, 8 GiB,
// 40 pods, 100 GiB, partitionable by 1 CPU, 1 GiB and 10 pods.
var testCapacity = provider.Capacity{Architecture: "amd64", CPU: 4000, Memory: 8 << 30, Pods: 40, Storage: 100 << 30}

var testPolicy = &fluidos.Partitionability{CpuMin: 1000, MemoryMin: 1 << 30, PodsMin: 10, CpuStep: 1000, MemoryStep: 1 << 30, PodsStep: 10}

type env struct {
	t     testing.TB
	ca    *devtls.CA
	etcd  *etcdtest.Server
	store *store.Store
	cfg   provider.Config
	p     *provider.Provider
	srv   *httptest.Server
	made  chan *fluidos.Contract
	halt  func() // stops the running provider and its server
}

type envOption func(*provider.Config)

func withTTL(d time.Duration) envOption { return func(c *provider.Config) { c.ReservationTTL = d } }

// newEnv starts etcd, a provider selling testCapacity and kvBlueprint, and
// its REAR server over mutual TLS; everything stops when the test ends.
func newEnv(t testing.TB, opts ...envOption) *env {
	t.Helper()
	e := &env{t: t, etcd: etcdtest.New(t), made: make(chan *fluidos.Contract, 128)}
	var err error
	if e.ca, err = devtls.OpenCA(t.TempDir()); err != nil {
		t.Fatal(err)
	}
	if e.store, err = store.New(e.etcd.Client(), seller); err != nil {
		t.Fatal(err)
	}
	if _, err := store.NewKind[*fluidos.ServiceBlueprint](e.store).Create(context.Background(), kvBlueprint()); err != nil {
		t.Fatal(err)
	}
	e.cfg = provider.Config{
		Self:         &fluidos.NodeIdentity{NodeId: seller, Domain: "test"},
		Store:        e.store,
		Capacity:     provider.CapacityFunc(func(context.Context) (provider.Capacity, error) { return testCapacity, nil }),
		Policy:       testPolicy,
		K8SlicePrice: &fluidos.Price{Amount: "1", Currency: "EUR", Period: "hourly"},
		Contracts:    provider.ContractHandlerFunc(func(_ context.Context, c *fluidos.Contract) { e.made <- c }),
	}
	for _, o := range opts {
		o(&e.cfg)
	}
	e.start()
	return e
}

// start (or restart) the provider and its server on the same store.
func (e *env) start() {
	e.t.Helper()
	var err error
	if e.p, err = provider.New(e.cfg); err != nil {
		e.t.Fatal(err)
	}
	if err := e.p.Sync(context.Background()); err != nil {
		e.t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = e.p.Start(ctx) }()
	b, err := e.ca.Issue(seller, devtls.LeafOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	e.srv = httptest.NewUnstartedServer(e.p.Handler(true))
	e.srv.TLS = b.ServerConfig()
	e.srv.StartTLS()
	srv := e.srv
	var once sync.Once
	e.halt = func() { once.Do(func() { srv.Close(); cancel(); <-done }) }
	e.t.Cleanup(e.halt)
}

// stop stops the server and the provider's timer, as a crash would (the
// store stays).
func (e *env) stop() { e.halt() }

func (e *env) addr() string { return strings.TrimPrefix(e.srv.URL, "https://") }

// client is a REAR client with the certificate of node name.
func (e *env) client(name string) *rear.Client {
	e.t.Helper()
	b, err := e.ca.Issue(name, devtls.LeafOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	c := rear.NewClient(b.ClientConfig(), 20*time.Second)
	e.t.Cleanup(c.Close)
	return c
}

func buyerNode(name string) *fluidos.NodeIdentity {
	return &fluidos.NodeIdentity{NodeId: name, Domain: "test", AdditionalInformation: &fluidos.NodeAdditionalInformation{LiqoId: name + "-cluster", Kubeconfig: "secret kubeconfig"}}
}

func kvBlueprint() *fluidos.ServiceBlueprint {
	return &fluidos.ServiceBlueprint{
		Id: "kv", Name: "kv", Category: "database", Tags: []string{"kv", "cache"}, MaxInstances: 1,
		HostingPolicies: []fluidos.HostingPolicy{fluidos.HostingPolicy_HOSTING_POLICY_PROVIDER},
		Price:           &fluidos.Price{Amount: "2", Currency: "EUR", Period: "monthly"},
		ConfigurationSchema: &fluidos.ConfigurationSchema{Parameters: []*fluidos.ConfigParameter{
			{Name: "password", Type: fluidos.ParameterType_PARAMETER_TYPE_STRING, Required: true, Pattern: "[a-z0-9]{8,}"},
			{Name: "port", Type: fluidos.ParameterType_PARAMETER_TYPE_INT, DefaultValue: "6379"},
		}},
	}
}

func k8sCfg(cpu, mem, pods int64) *fluidos.Configuration {
	return &fluidos.Configuration{Spec: &fluidos.Configuration_K8Slice{K8Slice: &fluidos.K8SliceConfiguration{Cpu: cpu, Memory: mem, Pods: pods}}}
}

func svcCfg(params map[string]string) *fluidos.Configuration {
	return &fluidos.Configuration{Spec: &fluidos.Configuration_Service{Service: &fluidos.ServiceConfiguration{Parameters: params}}}
}

func ctxT(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// waitFor polls cond every 10ms until it holds or d passes.
func waitFor(t testing.TB, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", d, what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func clientTLS(t testing.TB, e *env, name string) *tls.Config {
	t.Helper()
	b, err := e.ca.Issue(name, devtls.LeafOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return b.ClientConfig()
}
