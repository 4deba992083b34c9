package ccrm_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/edgekit/edgekit/executor"
	"github.com/edgekit/edgekit/hosts/ccrm/ccrmtest"
)

// On a 3-member etcd cluster, two replica processes go on working when a
// member stops in the middle of the run: every lifecycle completes and
// nothing is created twice.
func TestThreeMemberEtcdWithAMemberStopped(t *testing.T) {
	t.Parallel()
	r := ccrmtest.NewRegion(t, ccrmtest.RegionOptions{Members: 3, Latency: 10 * time.Millisecond})
	for i := range 2 {
		id := fmt.Sprintf("r%d", i)
		ccrmtest.StartReplica(t, id, r.ReplicaArgs(id, 3*time.Second), r.TokenEnv())
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	const n = 8
	errs := make(chan error, n)
	for i := range n {
		go func() { errs <- r.Lifecycle(ctx, i) }()
		if i == n/2 {
			r.Env.Cluster.StopMember(0)
		}
	}
	for range n {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	for i := range n {
		key := executor.KeyString(ccrmtest.ClusterKey(i))
		if st := r.Server.Platform.Stats(key); st.Created != 1 {
			t.Errorf("%s created %d times", key, st.Created)
		}
	}
}
