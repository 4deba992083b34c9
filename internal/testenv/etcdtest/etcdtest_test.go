package etcdtest_test

import (
	"context"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/edgekit/edgekit/internal/testenv/etcdtest"
)

func put(t *testing.T, cli *clientv3.Client, k, v string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := cli.Put(ctx, k, v); err != nil {
		t.Fatalf("put %s: %v", k, err)
	}
}

func get(t *testing.T, cli *clientv3.Client, k string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, err := cli.Get(ctx, k)
	if err != nil {
		t.Fatalf("get %s: %v", k, err)
	}
	if len(resp.Kvs) != 1 {
		t.Fatalf("get %s: %d values", k, len(resp.Kvs))
	}
	return string(resp.Kvs[0].Value)
}

func TestServerStopRestartKeepsData(t *testing.T) {
	t.Parallel()
	s := etcdtest.New(t)
	put(t, s.Client(), "k", "v1")
	s.Stop()
	if s.Running() {
		t.Fatal("running after Stop")
	}
	s.Restart()
	// The harness's client outlives the restart: same endpoints.
	if got := get(t, s.Client(), "k"); got != "v1" {
		t.Fatalf("after restart k = %q, want v1", got)
	}
}

func TestClusterSurvivesOneMemberStopped(t *testing.T) {
	t.Parallel()
	c := etcdtest.NewCluster(t, 3)
	if c.Size() != 3 || len(c.Endpoints()) != 3 {
		t.Fatalf("size %d, endpoints %v", c.Size(), c.Endpoints())
	}
	put(t, c.Client(), "a", "1")
	c.StopMember(0)
	put(t, c.Client(), "b", "2")
	if got := get(t, c.Member(1).Client(), "b"); got != "2" {
		t.Fatalf("b on member 1 = %q", got)
	}
	c.RestartMember(0)
	// The restarted member catches up with what was written while it was
	// down; a linearizable read on it waits for that.
	if got := get(t, c.Member(0).Client(), "b"); got != "2" {
		t.Fatalf("b on restarted member 0 = %q", got)
	}
}
