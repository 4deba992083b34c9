package consumer_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/edgekit/edgekit/fluidos"
	"github.com/edgekit/edgekit/fluidos/rear"
	"github.com/edgekit/edgekit/hosts/fluidos/consumer"
	"github.com/edgekit/edgekit/hosts/fluidos/provider"
	"github.com/edgekit/edgekit/internal/devtls"
	"github.com/edgekit/edgekit/internal/store"
	"github.com/edgekit/edgekit/internal/testenv/etcdtest"
)

// BenchmarkDiscovery measures one discovery (a K8Slice selector with a
// CPU range) across n providers at once, each a real provider on its own
// store region of one embedded etcd, behind its own REAR server over
// mutual TLS on loopback; the consumer keeps its connections between
// discoveries, as a node does.
func BenchmarkDiscovery(b *testing.B) {
	for _, n := range []int{1, 10} {
		b.Run(fmt.Sprintf("peers=%d", n), func(b *testing.B) { benchDiscovery(b, n) })
	}
}

func benchDiscovery(b *testing.B, n int) {
	etcd := etcdtest.New(b)
	ca, err := devtls.OpenCA(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	var peers []string
	for i := range n {
		id := fmt.Sprintf("p%d", i)
		st, err := store.New(etcd.Client(), id)
		if err != nil {
			b.Fatal(err)
		}
		p, err := provider.New(provider.Config{
			Self: &fluidos.NodeIdentity{NodeId: id}, Store: st,
			Capacity: provider.CapacityFunc(func(context.Context) (provider.Capacity, error) {
				return provider.Capacity{Architecture: "amd64", CPU: int64(1000 * (i + 1)), Memory: 8 << 30, Pods: 110}, nil
			}),
			Policy: &fluidos.Partitionability{CpuMin: 500, MemoryMin: 1 << 30, PodsMin: 1},
		})
		if err != nil {
			b.Fatal(err)
		}
		if err := p.Sync(ctx); err != nil {
			b.Fatal(err)
		}
		bundle, err := ca.Issue(id, devtls.LeafOptions{})
		if err != nil {
			b.Fatal(err)
		}
		srv := httptest.NewUnstartedServer(p.Handler(true))
		srv.TLS = bundle.ServerConfig()
		srv.StartTLS()
		b.Cleanup(srv.Close)
		peers = append(peers, strings.TrimPrefix(srv.URL, "https://"))
	}
	st, err := store.New(etcd.Client(), "buyer")
	if err != nil {
		b.Fatal(err)
	}
	bundle, err := ca.Issue("buyer", devtls.LeafOptions{})
	if err != nil {
		b.Fatal(err)
	}
	client := rear.NewClient(bundle.ClientConfig(), 0)
	b.Cleanup(client.Close)
	reg, err := consumer.NewRegistry(peers, 0)
	if err != nil {
		b.Fatal(err)
	}
	c, err := consumer.New(consumer.Config{Self: &fluidos.NodeIdentity{NodeId: "buyer"}, Store: st, Client: client, Peers: reg, PeerTimeout: 10 * time.Second})
	if err != nil {
		b.Fatal(err)
	}
	min := int64(1500)
	sel := &fluidos.Selector{Filter: &fluidos.Selector_K8Slice{K8Slice: &fluidos.K8SliceSelector{
		Cpu: &fluidos.ResourceFilter{Filter: &fluidos.ResourceFilter_Range{Range: &fluidos.ResourceRangeSelector{Min: &min}}}}}}
	discover := func() {
		found, results, err := c.Discover(ctx, sel)
		if err != nil {
			b.Fatal(err)
		}
		for _, r := range results {
			if r.GetError() != "" {
				b.Fatalf("peer %s: %s", r.GetAddress(), r.GetError())
			}
		}
		if len(found) != n-1 { // every provider but the 1 CPU one
			b.Fatalf("found %d flavors, want %d", len(found), n-1)
		}
	}
	discover() // open the connections
	for b.Loop() {
		discover()
	}
}
