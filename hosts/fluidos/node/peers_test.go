package node_test

import (
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/edgekit/edgekit/fluidos"
	"github.com/edgekit/edgekit/fluidos/rear"
	"github.com/edgekit/edgekit/hosts/fluidos/node"
	"github.com/edgekit/edgekit/hosts/fluidos/nodetest"
	"github.com/edgekit/edgekit/internal/devtls"
)

// hungPeer accepts connections and never answers; it closes them when the
// test ends.
func hungPeer(t *testing.T) string {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := lis.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		lis.Close()
		<-done
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	return lis.Addr().String()
}

// tlsPeer serves h over mutual TLS with a certificate named name of the
// network's authority.
func tlsPeer(t *testing.T, nw *nodetest.Network, name string, h http.Handler) string {
	t.Helper()
	b, err := nw.CA().Issue(name, devtls.LeafOptions{})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(h)
	srv.TLS = b.ServerConfig()
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return strings.TrimPrefix(srv.URL, "https://")
}

// impostorFlavors answers every discovery with a valid flavor that claims
// to be owned by owner.
func impostorFlavors(t *testing.T, owner string) http.Handler {
	t.Helper()
	f := &fluidos.Flavor{Id: "fake", Owner: &fluidos.NodeIdentity{NodeId: owner}, Availability: true,
		Spec: &fluidos.Flavor_K8Slice{K8Slice: &fluidos.K8Slice{Characteristics: &fluidos.K8SliceCharacteristics{Architecture: "amd64", Cpu: 64000, Memory: 1 << 40, Pods: 500}}}}
	w, err := rear.EncodeFlavor(f)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := json.Marshal([]*rear.Flavor{w})
	return http.HandlerFunc(func(rw http.ResponseWriter, _ *http.Request) {
		rw.Header().Set("Content-Type", "application/json")
		_, _ = rw.Write(body)
	})
}

func TestDiscoveryWithBadPeers(t *testing.T) {
	t.Parallel()
	nw := nodetest.NewNetwork(t)
	bob := nw.Start(node.Options{NodeID: "bob", Capacity: capacity("amd64")})
	hung := hungPeer(t)
	garbage := tlsPeer(t, nw, "garbage", http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte("<html>surprise</html>"))
	}))
	impostor := tlsPeer(t, nw, "mallory", impostorFlavors(t, "bob"))
	dead := func() string {
		lis, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer lis.Close()
		return lis.Addr().String()
	}()
	const peerTimeout = 500 * time.Millisecond
	alice := nw.Start(node.Options{NodeID: "alice", Capacity: capacity("amd64"), PeerTimeout: peerTimeout,
		Peers: []string{hung, garbage, bob.RearAddr(), impostor, dead}})
	ctx := ctxT(t)

	start := time.Now()
	resp, err := alice.Flavors().ListPeerFlavors(ctx, &fluidos.ListPeerFlavorsRequest{Selector: cpuAtLeast(1)})
	took := time.Since(start)
	if err != nil {
		t.Fatal(err)
	}
	if took > peerTimeout+3*time.Second {
		t.Errorf("discovery took %v with a peer timeout of %v", took, peerTimeout)
	}
	if len(resp.GetFlavors()) != 1 || resp.GetFlavors()[0].GetFlavor().GetOwner().GetNodeId() != "bob" || resp.GetFlavors()[0].GetAddress() != bob.RearAddr() {
		t.Fatalf("flavors %v, want bob's only", resp.GetFlavors())
	}
	want := map[string]string{hung: "no answer within", garbage: "garbage", impostor: "another node", dead: "refused", bob.RearAddr(): ""}
	if len(resp.GetPeerResults()) != len(want) {
		t.Fatalf("%d peer results, want %d", len(resp.GetPeerResults()), len(want))
	}
	for _, r := range resp.GetPeerResults() {
		w := want[r.GetAddress()]
		if (w == "") != (r.GetError() == "") || !strings.Contains(r.GetError(), w) {
			t.Errorf("peer %s: error %q, want one with %q", r.GetAddress(), r.GetError(), w)
		}
	}
}

func TestThreeNodesDiscoveryFilters(t *testing.T) {
	t.Parallel()
	nw := nodetest.NewNetwork(t)
	kv := &fluidos.ServiceBlueprint{Id: "kv", Name: "kv", Category: "database", Tags: []string{"kv", "cache"},
		HostingPolicies: []fluidos.HostingPolicy{fluidos.HostingPolicy_HOSTING_POLICY_PROVIDER}}
	mq := &fluidos.ServiceBlueprint{Id: "mq", Name: "mq", Category: "message-broker", Tags: []string{"amqp"},
		HostingPolicies: []fluidos.HostingPolicy{fluidos.HostingPolicy_HOSTING_POLICY_PROVIDER}}
	bob := nw.Start(node.Options{NodeID: "bob", Capacity: capacity("amd64"), Blueprints: []*fluidos.ServiceBlueprint{kv}})
	carol := nw.Start(node.Options{NodeID: "carol", Blueprints: []*fluidos.ServiceBlueprint{mq},
		Capacity: nodetest.Capacity(providerCapacity("arm64", 16000, 64<<30))})
	alice := nw.Start(node.Options{NodeID: "alice", Capacity: capacity("amd64"), Peers: []string{bob.RearAddr(), carol.RearAddr()}})
	ctx := ctxT(t)
	k8s := func(k *fluidos.K8SliceSelector) *fluidos.Selector {
		return &fluidos.Selector{Filter: &fluidos.Selector_K8Slice{K8Slice: k}}
	}
	svc := func(s *fluidos.ServiceSelector) *fluidos.Selector {
		return &fluidos.Selector{Filter: &fluidos.Selector_Service{Service: s}}
	}
	exact := func(s string) *fluidos.StringFilter {
		return &fluidos.StringFilter{Filter: &fluidos.StringFilter_Exact{Exact: s}}
	}
	regex := func(s string) *fluidos.StringFilter {
		return &fluidos.StringFilter{Filter: &fluidos.StringFilter_Regex{Regex: s}}
	}
	max8 := int64(8000)
	for name, c := range map[string]struct {
		sel    *fluidos.Selector
		owners string
	}{
		"everything":         {nil, "bob,bob,carol,carol"},
		"all slices":         {&fluidos.Selector{FlavorType: fluidos.FlavorType_FLAVOR_TYPE_K8SLICE}, "bob,carol"},
		"range":              {cpuAtLeast(8000), "carol"},
		"range max":          {k8s(&fluidos.K8SliceSelector{Cpu: &fluidos.ResourceFilter{Filter: &fluidos.ResourceFilter_Range{Range: &fluidos.ResourceRangeSelector{Max: &max8}}}}), "bob"},
		"match":              {k8s(&fluidos.K8SliceSelector{Memory: &fluidos.ResourceFilter{Filter: &fluidos.ResourceFilter_Match{Match: &fluidos.ResourceMatchSelector{Value: 64 << 30}}}}), "carol"},
		"architecture match": {k8s(&fluidos.K8SliceSelector{Architecture: exact("amd64")}), "bob"},
		"architecture regex": {k8s(&fluidos.K8SliceSelector{Architecture: regex("arm.*|riscv64")}), "carol"},
		"gpu required":       {k8s(&fluidos.K8SliceSelector{Gpu: &fluidos.GPUSelector{}}), ""},
		"tags":               {svc(&fluidos.ServiceSelector{Tags: []string{"cache"}}), "bob"},
		"category regex":     {svc(&fluidos.ServiceSelector{Category: regex("message-.*")}), "carol"},
		"tags nobody has":    {svc(&fluidos.ServiceSelector{Tags: []string{"kv", "amqp"}}), ""},
	} {
		resp, err := alice.Flavors().ListPeerFlavors(ctx, &fluidos.ListPeerFlavorsRequest{Selector: c.sel})
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		var owners []string
		for _, f := range resp.GetFlavors() {
			owners = append(owners, f.GetFlavor().GetOwner().GetNodeId())
		}
		if got := strings.Join(owners, ","); got != c.owners {
			t.Errorf("%s: flavors of %q, want %q", name, got, c.owners)
		}
	}
}
