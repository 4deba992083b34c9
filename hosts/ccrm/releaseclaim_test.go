package ccrm_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/edgekit/edgekit/hosts/ccrm/ccrmtest"
	"github.com/edgekit/edgekit/hosts/controller"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// A replica's claim goes with the report that settles its object, in the
// same etcd transaction (the controller deletes it when the report asks),
// not in a request of the replica's own after it: every claim of a
// lifecycle is deleted at a revision that also writes the object or its
// Info. So does the claim of a cloudlet's resources refresh, with the
// snapshot's report.
func TestClaimGoesWithTheSettlingReport(t *testing.T) {
	t.Parallel()
	r := ccrmtest.NewRegion(t, ccrmtest.RegionOptions{Cloudlets: 1, Latency: 5 * time.Millisecond})
	ccrmtest.StartReplica(t, "r0", r.ReplicaArgs("r0", 5*time.Second), r.TokenEnv())
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cli := r.Env.Store.Client()
	prefix := r.Env.Store.Prefix()
	claims := prefix + controller.ClaimPrefix
	start, err := cli.Get(ctx, prefix, clientv3.WithPrefix(), clientv3.WithCountOnly())
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Lifecycle(ctx, 0); err != nil {
		t.Fatal(err)
	}
	end, err := cli.Get(ctx, prefix, clientv3.WithPrefix(), clientv3.WithCountOnly())
	if err != nil {
		t.Fatal(err)
	}
	// Every change between the two, by revision.
	type change struct{ claimDeleted, cloudlet, other bool }
	byRev := map[int64]*change{}
	wctx, wcancel := context.WithCancel(ctx)
	defer wcancel()
	wch := cli.Watch(wctx, prefix, clientv3.WithPrefix(), clientv3.WithRev(start.Header.Revision+1))
	for seen := start.Header.Revision; seen < end.Header.Revision; {
		wr, ok := <-wch
		if !ok || wr.Err() != nil {
			t.Fatalf("watch ended at revision %d of %d: %v", seen, end.Header.Revision, wr.Err())
		}
		for _, ev := range wr.Events {
			rev := ev.Kv.ModRevision
			seen = max(seen, rev)
			if rev > end.Header.Revision {
				continue
			}
			c := byRev[rev]
			if c == nil {
				c = &change{}
				byRev[rev] = c
			}
			switch k := string(ev.Kv.Key); {
			case strings.HasPrefix(k, claims) && ev.Type == clientv3.EventTypeDelete:
				c.claimDeleted = true
				if strings.HasPrefix(k, claims+"Cloudlet/") {
					c.cloudlet = true
				}
			case strings.HasPrefix(k, claims):
			default:
				c.other = true
			}
		}
	}
	released, refreshes := 0, 0
	for rev, c := range byRev {
		if !c.claimDeleted {
			continue
		}
		if c.cloudlet {
			refreshes++
		} else {
			released++
		}
		if !c.other {
			t.Errorf("a claim was deleted alone at revision %d, not with the report that settled its object", rev)
		}
	}
	// A create, an update and a delete of the cluster and of the
	// instance; each is followed by a refresh of the cloudlet's
	// resources (coalesced when they overlap).
	if released != 6 || refreshes == 0 {
		t.Errorf("%d claims of operations and %d of resources refreshes deleted, want 6 and at least 1", released, refreshes)
	}
}
