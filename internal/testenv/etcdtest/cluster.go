package etcdtest

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/edgekit/edgekit/internal/etcd"
)

// clusterTries bounds the attempts at starting a cluster whose free ports
// were taken between picking and binding them.
const clusterTries = 3

// Raft timing of test clusters (WithConfig may change it).
const (
	clusterHeartbeat = 20 * time.Millisecond
	clusterElection  = 200 * time.Millisecond
)

// Cluster is a cluster of embedded members run for a test.
type Cluster struct {
	t       testing.TB
	members []*Server
	client  *clientv3.Client
}

// NewCluster starts a cluster of n members (n >= 1) for t, all at once,
// and stops it in t.Cleanup.
func NewCluster(t testing.TB, n int, opts ...Option) *Cluster {
	t.Helper()
	if n < 1 {
		t.Fatalf("etcdtest: a cluster of %d members", n)
	}
	var err error
	for range clusterTries {
		var ms []*etcd.Embedded
		ms, err = startCluster(t, n, opts)
		if err == nil {
			c := &Cluster{t: t}
			for _, m := range ms {
				s := &Server{t: t, cfg: m.Config(), m: m}
				t.Cleanup(s.close)
				s.client = s.NewClient()
				c.members = append(c.members, s)
			}
			c.client = c.NewClient()
			return c
		}
		if !etcd.IsAddrInUse(err) {
			break
		}
	}
	t.Fatalf("etcdtest: cluster of %d: %v", n, err)
	return nil
}

// startCluster starts n members on fresh ports and data directories; on
// error it stops those that started.
func startCluster(t testing.TB, n int, opts []Option) ([]*etcd.Embedded, error) {
	base := t.TempDir()
	cfgs := make([]etcd.EmbedConfig, n)
	peers := make([]string, n)
	for i := range cfgs {
		cp, err := etcd.FreePort("127.0.0.1")
		if err != nil {
			return nil, err
		}
		pp, err := etcd.FreePort("127.0.0.1")
		if err != nil {
			return nil, err
		}
		c := etcd.EmbedConfig{
			Name:       fmt.Sprintf("m%d", i),
			DataDir:    filepath.Join(base, fmt.Sprintf("m%d", i)),
			ClientAddr: fmt.Sprintf("127.0.0.1:%d", cp),
			PeerAddr:   fmt.Sprintf("127.0.0.1:%d", pp),
		}
		// Short raft timing, as etcd's own integration tests use: a cluster
		// elects its leader, and elects another after a stop, in well under
		// a second.
		c.HeartbeatInterval, c.ElectionTimeout = clusterHeartbeat, clusterElection
		applyDefaults(&c, opts)
		cfgs[i] = c
		peers[i] = fmt.Sprintf("%s=http://%s", c.Name, c.PeerAddr)
	}
	initial := strings.Join(peers, ",")
	ms := make([]*etcd.Embedded, n)
	errs := make([]error, n)
	// Members of a new cluster wait for each other: start them together.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var wg sync.WaitGroup
	for i := range cfgs {
		cfgs[i].InitialCluster = initial
		wg.Go(func() {
			ms[i], errs[i] = etcd.StartEmbedded(ctx, cfgs[i])
			if errs[i] != nil {
				cancel() // the others cannot reach quorum without it
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		for _, m := range ms {
			if m != nil {
				_ = m.Close()
			}
		}
		return nil, err
	}
	return ms, nil
}

// Client returns a client of every member, closed when the test ends. It
// moves to another member when the one it uses stops.
func (c *Cluster) Client() *clientv3.Client { return c.client }

// NewClient returns a new client of every member, closed when the test
// ends.
func (c *Cluster) NewClient() *clientv3.Client {
	c.t.Helper()
	return newClient(c.t, c.Endpoints())
}

// Endpoints returns the client URLs of every member.
func (c *Cluster) Endpoints() []string {
	var eps []string
	for _, m := range c.members {
		eps = append(eps, m.Endpoints()...)
	}
	return eps
}

// Size returns the number of members.
func (c *Cluster) Size() int { return len(c.members) }

// Member returns member i (0-based); its Client talks to that member only.
func (c *Cluster) Member(i int) *Server { return c.members[i] }

// StopMember stops member i, keeping its data.
func (c *Cluster) StopMember(i int) { c.members[i].Stop() }

// RestartMember starts the stopped member i again.
func (c *Cluster) RestartMember(i int) { c.members[i].Restart() }
