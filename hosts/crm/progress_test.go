package crm_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/hosts/controller/controllertest"
	"github.com/edgekit/edgekit/platforms/fake"
)

// TestCRMProgressArrivesWithItsState follows changes run by a CRM through
// the controller's progress stream: every step the platform reports
// arrives with the state it was reported in (CREATING, DELETING), in
// order, before the outcome, and no line only repeats its state.
func TestCRMProgressArrivesWithItsState(t *testing.T) {
	t.Parallel()
	e := newEdge(t)
	ctx := testCtx(t)
	e.startCRM(t, e.env.Addr, fake.New(fake.Options{}))
	waitState[*edgeproto.Cloudlet](t, e, e.cloudlet, edgeproto.TrackedState_TRACKED_STATE_READY)

	const (
		creating = edgeproto.TrackedState_TRACKED_STATE_CREATING
		deleting = edgeproto.TrackedState_TRACKED_STATE_DELETING
		ready    = edgeproto.TrackedState_TRACKED_STATE_READY
		done     = edgeproto.TrackedState_TRACKED_STATE_DELETE_DONE
	)
	ps, err := controllertest.Drain(e.dev.clusters.CreateClusterInst(ctx, &edgeproto.CreateClusterInstRequest{ClusterInst: e.cluster("c1")}))
	if err != nil {
		t.Fatalf("create cluster: %v", err)
	}
	checkProgress(t, "create cluster", ps, ready, []step{
		{"Creating ClusterInst", creating}, {"Reserving subnet", creating}, {"Creating nodes", creating}, {"Cluster ready", creating},
	})
	ps, err = controllertest.Drain(e.dev.clusters.DeleteClusterInst(ctx, &edgeproto.DeleteClusterInstRequest{Key: e.cluster("c1").Key}))
	if err != nil {
		t.Fatalf("delete cluster: %v", err)
	}
	checkProgress(t, "delete cluster", ps, done, []step{
		{"Deleting ClusterInst", deleting}, {"Releasing subnet", deleting}, {"Cluster deleted", deleting},
	})
	ps, err = controllertest.Drain(e.op.cloudlets.DeleteCloudlet(ctx, &edgeproto.DeleteCloudletRequest{Key: e.cloudlet}))
	if err != nil {
		t.Fatalf("delete cloudlet: %v", err)
	}
	checkProgress(t, "delete cloudlet", ps, done, []step{
		{"Deleting cloudlet", deleting}, {"Removing cloudlet", deleting},
	})
}

// step is a progress message and the state it must arrive in.
type step struct {
	msg   string
	state edgeproto.TrackedState
}

// checkProgress checks a change's progress stream: it ends with one final
// message in state final; the messages of want arrive once each, in their
// order and each in the state want names; and no message is only its
// state's name.
func checkProgress(t *testing.T, what string, ps []*edgeproto.Progress, final edgeproto.TrackedState, want []step) {
	t.Helper()
	var lines []string
	for _, p := range ps {
		lines = append(lines, fmt.Sprintf("%s  %s", strings.TrimPrefix(p.GetState().String(), "TRACKED_STATE_"), p.GetMessage()))
	}
	stream := strings.Join(lines, "\n")
	t.Logf("%s:\n%s", what, stream)
	if controllertest.Final(ps) != final {
		t.Errorf("%s: the stream does not end in %v:\n%s", what, final, stream)
	}
	var got []step
	for i, p := range ps {
		state := strings.TrimPrefix(p.GetState().String(), "TRACKED_STATE_")
		if p.GetMessage() == state {
			t.Errorf("%s: line %q only repeats its state:\n%s", what, lines[i], stream)
		}
		if p.GetState() == final && i != len(ps)-1 {
			t.Errorf("%s: line %q arrives in the final state before the outcome:\n%s", what, lines[i], stream)
		}
		for _, w := range want {
			if p.GetMessage() == w.msg {
				got = append(got, step{p.GetMessage(), p.GetState()})
			}
		}
	}
	if !slices.Equal(got, want) {
		t.Errorf("%s: steps %v, want %v:\n%s", what, got, want, stream)
	}
}
