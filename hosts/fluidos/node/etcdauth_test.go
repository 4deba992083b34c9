package node_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/edgekit/edgekit/hosts/fluidos/node"
	"github.com/edgekit/edgekit/hosts/fluidos/nodetest"
	"github.com/edgekit/edgekit/internal/devtls"
	"github.com/edgekit/edgekit/internal/etcd"
)

// Under a development authority a node's embedded etcd serves TLS and
// knows one user, the node: a client without a certificate, and another
// node of the same authority, read nothing; the node's own certificate
// does.
func TestDevTLSNodeEtcdAuthenticatesTheNodeOnly(t *testing.T) {
	t.Parallel()
	nw := nodetest.NewNetwork(t)
	bob := nw.Start(node.Options{NodeID: "bob", Domain: "example.org", Capacity: capacity("amd64")})
	eps := bob.Running().EtcdEndpoints
	if len(eps) != 1 || !strings.HasPrefix(eps[0], "https://") {
		t.Fatalf("bob's etcd at %v: want https", eps)
	}
	get := func(cc etcd.ClientConfig) error {
		cc.DialTimeout = 2 * time.Second
		cli, err := etcd.NewClient(cc)
		if err != nil {
			t.Fatal(err)
		}
		defer cli.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_, err = cli.Get(ctx, "/edgekit/", clientv3.WithPrefix(), clientv3.WithKeysOnly())
		return err
	}
	if err := get(etcd.ClientConfig{Endpoints: eps, CAFile: filepath.Join(nw.CADir(), devtls.CACertFile)}); err == nil {
		t.Error("a client without a certificate read bob's etcd")
	}
	as := func(user string) etcd.ClientConfig {
		cc, err := etcd.DevClientConfig(nw.CA(), user, eps)
		if err != nil {
			t.Fatal(err)
		}
		return cc
	}
	if err := get(as("alice")); err == nil {
		t.Error("alice's certificate read bob's etcd")
	}
	if err := get(as("bob")); err != nil {
		t.Errorf("bob's certificate: %v", err)
	}
}
