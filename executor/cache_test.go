package executor_test

import (
	"context"
	"errors"
	"testing"

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/executor"
	"github.com/edgekit/edgekit/fieldmap"
	"google.golang.org/protobuf/proto"
)

func TestKeyString(t *testing.T) {
	k := &edgeproto.ClusterKey{Name: "c1", Organization: "dev"}
	ci := &edgeproto.ClusterInst{Key: k, FlavorName: "x"}
	if executor.KeyString(ci) != executor.KeyString(k) || executor.KeyString(k) == "" {
		t.Errorf("object and key strings differ: %q %q", executor.KeyString(ci), executor.KeyString(k))
	}
	a := executor.KeyString(&edgeproto.ClusterKey{Name: "a,organization=b"})
	b := executor.KeyString(&edgeproto.ClusterKey{Name: "a", Organization: "b"})
	if a == b {
		t.Errorf("distinct keys render alike: %q", a)
	}
	if executor.KeyString(&edgeproto.ClusterInst{}) != "" || executor.KeyString(nil) != "" {
		t.Errorf("keyless objects must give an empty key")
	}
}

func TestCacheAppliesPartialUpdates(t *testing.T) {
	c := executor.NewCache[*edgeproto.ClusterInstInfo]()
	key := &edgeproto.ClusterKey{Name: "c1"}
	full := &edgeproto.ClusterInstInfo{Key: key, State: edgeproto.TrackedState_TRACKED_STATE_CREATING, Errors: []string{"old"}}
	c.Put(full)
	fm, _ := edgeproto.NewClusterInstInfoFieldMap(edgeproto.ClusterInstInfoFieldKey, edgeproto.ClusterInstInfoFieldState)
	if n := c.Apply(&edgeproto.ClusterInstInfo{Key: key, State: edgeproto.TrackedState_TRACKED_STATE_READY}, fm); n != 1 {
		t.Errorf("changed = %d, want 1", n)
	}
	got, _ := c.Get(executor.KeyString(key))
	if got.State != edgeproto.TrackedState_TRACKED_STATE_READY || len(got.Errors) != 1 {
		t.Errorf("after partial update: %v", got)
	}
	got.Errors = nil // a clone: the cache is unaffected
	again, _ := c.Get(executor.KeyString(key))
	if len(again.Errors) != 1 {
		t.Error("Get returned shared memory")
	}
}

func TestStreamRoundTrip(t *testing.T) {
	s := executor.NewStream[*edgeproto.ClusterInstInfo](4)
	dst := executor.NewCache[*edgeproto.ClusterInstInfo]()
	ctx := context.Background()
	key := &edgeproto.ClusterKey{Name: "c1"}
	fm, _ := edgeproto.NewClusterInstInfoFieldMap(edgeproto.ClusterInstInfoFieldKey, edgeproto.ClusterInstInfoFieldStatusMsgs)
	info := &edgeproto.ClusterInstInfo{Key: key, State: edgeproto.TrackedState_TRACKED_STATE_READY,
		Status: &edgeproto.StatusInfo{Msgs: []string{"a"}}}
	if err := s.Send(ctx, info, fm); err != nil {
		t.Fatal(err)
	}
	if err := s.Send(ctx, &edgeproto.ClusterInstInfo{Key: key, NotifyId: 7}, nil); err != nil { // nil: every field
		t.Fatal(err)
	}
	s.Close()
	if err := s.Receive(ctx, dst); err != nil {
		t.Fatal(err)
	}
	got, _ := dst.Get(executor.KeyString(key))
	want := &edgeproto.ClusterInstInfo{Key: key, NotifyId: 7}
	if !proto.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
	// An unknown flag on the wire is an error naming it.
	_, _, err := s.Decode(executor.StreamMessage{Fields: []string{"99"}})
	if !errors.Is(err, fieldmap.ErrUnknownField) {
		t.Errorf("Decode(unknown flag) = %v", err)
	}
}

func TestStreamSendHonoursContext(t *testing.T) {
	s := executor.NewStream[*edgeproto.ClusterInstInfo](0)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := s.Send(ctx, &edgeproto.ClusterInstInfo{}, fieldmap.Of())
	if !errors.Is(err, context.Canceled) {
		t.Errorf("Send on a full stream with an ended context = %v", err)
	}
}
