package node_test

import (
	"crypto/tls"
	"testing"
	"time"

	"github.com/edgekit/edgekit/fluidos"
	"github.com/edgekit/edgekit/fluidos/rear"
	"github.com/edgekit/edgekit/hosts/fluidos/node"
	"github.com/edgekit/edgekit/hosts/fluidos/nodetest"
	"github.com/edgekit/edgekit/internal/devtls"
)

// Two nodes whose certificates live a few seconds keep trading over REAR
// for several of their lives: every new REAR handshake sees a valid node
// certificate, each node renews its own several times, and the calls
// (the consumer's REAR requests with its renewed client certificate, the
// test's API connection opened at the start) never fail.
func TestREARCertificatesRenew(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs for about 15 seconds")
	}
	const validity = 3 * time.Second
	nw := nodetest.NewNetwork(t)
	bob := nw.Start(node.Options{NodeID: "bob", Capacity: capacity("amd64"), DevTLSValidity: validity})
	alice := nw.Start(node.Options{NodeID: "alice", Capacity: capacity("amd64"), DevTLSValidity: validity, Peers: []string{bob.RearAddr()}})
	ctx := ctxT(t)
	for _, n := range []*nodetest.Node{alice, bob} {
		if n.Running().Certificate == nil {
			t.Fatalf("%s has no certificate renewer", n.ID())
		}
	}
	probe, err := nw.CA().Issue("probe", devtls.LeafOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// check makes a new REAR connection to n and checks the certificate n
	// presents on it is valid now and is n's; it returns its serial.
	check := func(n *nodetest.Node) string {
		t.Helper()
		c, err := tls.Dial("tcp", n.RearAddr(), probe.ClientConfig())
		if err != nil {
			t.Fatalf("new REAR handshake with %s: %v", n.ID(), err)
		}
		defer c.Close()
		leaf := c.ConnectionState().PeerCertificates[0]
		if now := time.Now(); now.After(leaf.NotAfter) || now.Before(leaf.NotBefore) || leaf.Subject.CommonName != n.ID() {
			t.Fatalf("%s presented %q valid %v to %v, now %v", n.ID(), leaf.Subject.CommonName, leaf.NotBefore, leaf.NotAfter, now)
		}
		return leaf.SerialNumber.String()
	}
	seen := map[string]bool{}
	end := time.Now().Add(5 * validity)
	for i := 0; time.Now().Before(end); i++ {
		seen[check(bob)] = true
		seen[check(alice)] = true
		resp, err := alice.Flavors().ListPeerFlavors(ctx, &fluidos.ListPeerFlavorsRequest{})
		if err != nil || len(resp.GetFlavors()) == 0 {
			t.Fatalf("call %d: alice lists bob's flavors: %v, %v", i, resp.GetFlavors(), err)
		}
		// A new REAR connection with the client certificate alice presents
		// now: bob refuses one that is not valid.
		cli := rear.NewClient(alice.Running().Certificate.Bundle(nw.CA().Pool()).ClientConfig(), 10*time.Second)
		ans, err := cli.ListFlavors(ctx, bob.RearAddr(), nil)
		cli.Close()
		if err != nil || len(ans.Flavors) == 0 {
			t.Fatalf("call %d: a new REAR connection with alice's current certificate: %v", i, err)
		}
		time.Sleep(100 * time.Millisecond) // paces the traffic; nothing waits on it
	}
	for _, n := range []*nodetest.Node{alice, bob} {
		if got := n.Running().Certificate.Renewals(); got < 3 {
			t.Errorf("%s renewed its certificate %d times, want at least 3", n.ID(), got)
		}
	}
	if len(seen) < 6 {
		t.Errorf("new handshakes saw %d node certificates, want at least 6", len(seen))
	}
}
