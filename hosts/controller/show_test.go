package controller_test

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/proto"

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/hosts/controller/controllertest"
	"github.com/edgekit/edgekit/internal/store"
)

// slowClients returns the API clients of a connection whose receive
// windows are fixed at 64 KiB (gRPC does not widen them), so that a
// client that stops reading stops the server after at most that much.
func slowClients(t *testing.T, env *controllertest.Env, token string) *clients {
	t.Helper()
	conn, err := grpc.NewClient(env.Addr,
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithPerRPCCredentials(controllertest.BearerToken(token)),
		grpc.WithInitialWindowSize(64<<10), grpc.WithInitialConnWindowSize(64<<10))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	return clientsOf(conn)
}

// genOf is the "gen" annotation of an AppInst.
func genOf(t *testing.T, a *edgeproto.AppInst) int {
	t.Helper()
	g, err := strconv.Atoi(a.GetAnnotations()["gen"])
	if err != nil {
		t.Fatalf("%s: gen: %v", a.GetKeyString(), err)
	}
	return g
}

// A Show that races writes answers as of one revision: a writer updates
// the first object of the answer, then the last, round after round; the
// client reads the first object, waits until the writer has done several
// more rounds, then reads the rest. The last object must be of the same
// round as the first (or the round before), never of a later one, as it
// would be if the server read objects as they are now rather than as they
// were when the Show began. A Show after a write then reads that write.
func TestShowRacingWritesIsOneRevision(t *testing.T) {
	t.Parallel()
	env := controllertest.Start(t, controllertest.Options{})
	ctx := testCtx(t)
	const n = 3000 // between the first and the last: far more than the stream's windows hold
	putAppInsts(t, env.Store, n, func(i int) *edgeproto.AppInst { return showAppInst("dev", i) })
	k := store.NewKind[*edgeproto.AppInst](env.Store)
	first, last := showAppInst("dev", 0), showAppInst("dev", 0)
	first.Key.Name, last.Key.Name = "a-first", "z-last"
	for _, a := range []*edgeproto.AppInst{first, last} {
		a.Annotations = map[string]string{"gen": "0"}
		if _, err := k.Create(ctx, a); err != nil {
			t.Fatal(err)
		}
	}
	gen, err := (&edgeproto.AppInst{}).FieldSchema().New(edgeproto.AppInstFieldAnnotations)
	if err != nil {
		t.Fatal(err)
	}
	setGen := func(key string, g int) (int64, error) {
		_, rev, err := k.Update(ctx, key, &edgeproto.AppInst{Annotations: map[string]string{"gen": strconv.Itoa(g)}}, gen, nil)
		return rev, err
	}

	var rounds = make(chan int, 1) // the last round done
	rounds <- 0
	done := make(chan error, 1)
	stop := make(chan struct{})
	go func() {
		for g := 1; g <= 100000; g++ {
			select {
			case <-stop:
				done <- nil
				return
			default:
			}
			for _, key := range []string{first.GetKeyString(), last.GetKeyString()} {
				if _, err := setGen(key, g); err != nil {
					done <- err
					return
				}
			}
			<-rounds
			rounds <- g
		}
		done <- nil
	}()
	stopWriter := func() {
		select {
		case <-stop:
			return
		default:
		}
		close(stop)
		if err := <-done; err != nil {
			t.Errorf("writer: %v", err)
		}
	}
	t.Cleanup(stopWriter)
	round := func() int { g := <-rounds; rounds <- g; return g }
	controllertest.WaitFor(t, 30*time.Second, "the writer's first round", func() bool { return round() >= 1 })

	admin := slowClients(t, env, env.AdminToken())
	s, err := admin.appInsts.ShowAppInsts(ctx, &edgeproto.ShowAppInstsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := s.Recv()
	if err != nil {
		t.Fatal(err)
	}
	if resp.GetAppInst().GetKeyString() != first.GetKeyString() {
		t.Fatalf("first object %s, want %s", resp.GetAppInst().GetKeyString(), first.GetKeyString())
	}
	g0 := genOf(t, resp.GetAppInst())
	controllertest.WaitFor(t, 60*time.Second, "three more rounds of writes", func() bool { return round() >= g0+3 })
	got := 1
	var lastSeen *edgeproto.AppInst
	for {
		resp, err := s.Recv()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		got++
		lastSeen = resp.GetAppInst()
	}
	stopWriter()
	if got != n+2 {
		t.Fatalf("showed %d AppInsts, want %d", got, n+2)
	}
	if lastSeen.GetKeyString() != last.GetKeyString() {
		t.Fatalf("last object %s, want %s", lastSeen.GetKeyString(), last.GetKeyString())
	}
	if g := genOf(t, lastSeen); g != g0 && g != g0-1 {
		t.Fatalf("the first object is of round %d but the last of round %d: not one revision", g0, g)
	}

	// Read your writes: a Show right after a write sees it.
	if _, err := setGen(last.GetKeyString(), 999999); err != nil {
		t.Fatal(err)
	}
	s, err = admin.appInsts.ShowAppInsts(ctx, &edgeproto.ShowAppInstsRequest{Filter: &edgeproto.AppInst{Key: last.Key}})
	if err != nil {
		t.Fatal(err)
	}
	resp, err = s.Recv()
	if err != nil {
		t.Fatal(err)
	}
	if g := genOf(t, resp.GetAppInst()); g != 999999 {
		t.Fatalf("Show after a write read round %d", g)
	}
}

// A client that reads the first object of a long Show and then stops
// reading does not make the controller hold the answer: the live heap
// (after a collection) while the client waits grows by less than an
// eighth of what the former way, which copied every object before sending
// the first, makes it grow by; that the former way grows it by more than
// half the answer's size on the wire shows that the measure sees an
// answer held.
func TestShowToASlowClientHoldsLittle(t *testing.T) {
	// Not parallel: it measures the process's heap.
	env := controllertest.Start(t, controllertest.Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute) // slow under the race detector
	t.Cleanup(cancel)
	const n = 6000
	// AppInsts with many annotations, so that holding them costs much
	// more than the fixed buffers of a stream.
	obj := func(i int) *edgeproto.AppInst {
		a := showAppInst("dev", i)
		for j := range 16 {
			a.Annotations[fmt.Sprintf("label%02d", j)] = fmt.Sprintf("value%02d-%d", j, i)
		}
		return a
	}
	putAppInsts(t, env.Store, n, obj)
	answer := 0
	for i := range n {
		answer += proto.Size(obj(i))
	}
	admin := slowClients(t, env, env.AdminToken())
	drain := func(s grpc.ServerStreamingClient[edgeproto.ShowAppInstsResponse], got int) int {
		for {
			_, err := s.Recv()
			if err == io.EOF {
				return got
			}
			if err != nil {
				t.Fatal(err)
			}
			got++
		}
	}
	held := func(whole bool) uint64 {
		env.Controller.SetShowWhole(whole)
		defer env.Controller.SetShowWhole(false)
		// Warm up: the same walk, nothing sent.
		s, err := admin.appInsts.ShowAppInsts(ctx, &edgeproto.ShowAppInstsRequest{Filter: &edgeproto.AppInst{Key: &edgeproto.AppInstKey{Organization: "nobody"}}})
		if err != nil {
			t.Fatal(err)
		}
		if got := drain(s, 0); got != 0 {
			t.Fatalf("the filter matched %d", got)
		}
		_, before := heapNow()
		s, err = admin.appInsts.ShowAppInsts(ctx, &edgeproto.ShowAppInstsRequest{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Recv(); err != nil {
			t.Fatal(err)
		}
		_, during := heapNow()
		if got := drain(s, 1); got != n {
			t.Fatalf("showed %d AppInsts, want %d", got, n)
		}
		if during < before {
			return 0
		}
		return during - before
	}
	stream, whole := held(false), held(true)
	t.Logf("answer %d KiB; live heap grew by %d KiB while the client waited (by %d KiB the former way)", answer>>10, stream>>10, whole>>10)
	if whole < uint64(answer)/2 {
		t.Fatalf("the measure does not see the former way hold the answer: %d KiB held for an answer of %d KiB", whole>>10, answer>>10)
	}
	if stream > whole/8 {
		t.Fatalf("the controller held %d KiB while the client waited, the former way %d KiB", stream>>10, whole>>10)
	}
}
