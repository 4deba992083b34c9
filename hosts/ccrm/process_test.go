package ccrm_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/edgekit/edgekit/executor"
	"github.com/edgekit/edgekit/hosts/ccrm/ccrmtest"
	"github.com/edgekit/edgekit/hosts/controller/controllertest"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// Two replica processes share the work of a few lifecycles; every object
// is created once on the platform, and a replica stopped with SIGTERM
// exits cleanly leaving no claim behind.
func TestReplicaProcessesShareLifecycles(t *testing.T) {
	t.Parallel()
	r := ccrmtest.NewRegion(t, ccrmtest.RegionOptions{Latency: 10 * time.Millisecond})
	var ps []*ccrmtest.Process
	for i := range 2 {
		id := fmt.Sprintf("r%d", i)
		ps = append(ps, ccrmtest.StartReplica(t, id, r.ReplicaArgs(id, 2*time.Second), r.TokenEnv()))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	errs := make(chan error, 4)
	for i := range 4 {
		go func() { errs <- r.Lifecycle(ctx, i) }()
	}
	for range 4 {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	for i := range 4 {
		for _, key := range []string{executor.KeyString(ccrmtest.ClusterKey(i)), executor.KeyString(ccrmtest.AppInstKey(i))} {
			if st := r.Server.Platform.Stats(key); st.Created != 1 || st.Deleted != 1 {
				t.Errorf("%s: platform stats %+v, want one create and one delete", key, st)
			}
		}
	}
	for _, p := range ps {
		if !p.Terminate(10 * time.Second) {
			t.Errorf("replica did not stop cleanly on SIGTERM:\n%s", p.Log())
		}
	}
	controllertest.WaitFor(t, 10*time.Second, "no claims left", func() bool {
		resp, err := r.Env.Store.Client().Get(ctx, r.Env.Store.Prefix()+"ccrm/claims/", clientv3.WithPrefix(), clientv3.WithCountOnly())
		return err == nil && resp.Count == 0
	})
}
