package reservations_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/edgekit/edgekit/executor"
	"github.com/edgekit/edgekit/executor/reservationstest"
	"github.com/edgekit/edgekit/hosts/ccrm/reservations"
	"github.com/edgekit/edgekit/internal/etcd"
	"github.com/edgekit/edgekit/internal/testenv/etcdtest"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// Environment of a reserver process (see TestMain).
const (
	envEndpoints = "RESERVATIONS_TEST_ENDPOINTS"
	envPrefix    = "RESERVATIONS_TEST_PREFIX"
	envProc      = "RESERVATIONS_TEST_PROC"
	envN         = "RESERVATIONS_TEST_N"
)

// TestMain lets the test binary run as a reserver process: it takes the
// lowest free port for N owners at once, and exits.
func TestMain(m *testing.M) {
	if eps := os.Getenv(envEndpoints); eps != "" {
		os.Exit(reserver(eps))
	}
	os.Exit(m.Run())
}

func reserver(eps string) int {
	cli, err := etcd.NewClient(etcd.ClientConfig{Endpoints: strings.Split(eps, ",")})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer cli.Close()
	r, err := reservations.New(cli, os.Getenv(envPrefix), reservations.Options{})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	n, _ := strconv.Atoi(os.Getenv(envN))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var wg sync.WaitGroup
	var failed atomic.Bool
	for i := range n {
		wg.Go(func() {
			if _, err := reservationstest.TakeLowest(ctx, r, "site1", executor.ReservePort, owner(os.Getenv(envProc), i)); err != nil {
				fmt.Fprintln(os.Stderr, err)
				failed.Store(true)
			}
		})
	}
	wg.Wait()
	if failed.Load() {
		return 1
	}
	return 0
}

func owner(proc string, i int) string { return "p" + proc + "-" + strconv.Itoa(i) }

func newRes(t *testing.T, cli *clientv3.Client, prefix string) *reservations.Reservations {
	t.Helper()
	r, err := reservations.New(cli, prefix, reservations.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestConformance(t *testing.T) {
	t.Parallel()
	srv := etcdtest.New(t)
	var n atomic.Int64
	reservationstest.Run(t, func(t *testing.T) executor.Reservations {
		return newRes(t, srv.Client(), fmt.Sprintf("/edgekit/t%d/ccrm/reservations/", n.Add(1)))
	})
}

// 50 reservers in 4 processes take the lowest free port of one cloudlet at
// once: no port is handed out twice.
func TestFiftyReserversInFourProcesses(t *testing.T) {
	t.Parallel()
	srv := etcdtest.New(t)
	const prefix = "/edgekit/procs/ccrm/reservations/"
	per := []int{13, 13, 12, 12}
	var cmds []*exec.Cmd
	var owners []string
	for p, n := range per {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), envEndpoints+"="+strings.Join(srv.Endpoints(), ","), envPrefix+"="+prefix,
			envProc+"="+strconv.Itoa(p), envN+"="+strconv.Itoa(n))
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
		cmds = append(cmds, cmd)
		for i := range n {
			owners = append(owners, owner(strconv.Itoa(p), i))
		}
	}
	for i, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Errorf("reserver process %d: %v", i, err)
		}
	}
	r := newRes(t, srv.Client(), prefix)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := reservationstest.CheckUnique(ctx, r, "site1", executor.ReservePort, owners, 1); err != nil {
		t.Fatal(err)
	}
	snap, err := r.Snapshot(ctx, "site1")
	if err != nil || len(snap[executor.ReservePort]) != 50 {
		t.Fatalf("%d ports reserved (%v), want 50", len(snap[executor.ReservePort]), err)
	}
}

// An update whose reads another process changed before its commit runs
// again on the new table.
func TestUpdateRerunsOnConflict(t *testing.T) {
	t.Parallel()
	srv := etcdtest.New(t)
	const prefix = "/edgekit/rerun/ccrm/reservations/"
	a, b := newRes(t, srv.Client(), prefix), newRes(t, srv.NewClient(), prefix)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	runs, got := 0, ""
	err := a.Update(ctx, "site1", func(set executor.ReservationSet) error {
		runs++
		v := "0"
		if set.Owner("port", v) != "" {
			v = "1"
		}
		if runs == 1 {
			// Another process takes port 0 between this read and the commit.
			if _, err := reservationstest.TakeLowest(ctx, b, "site1", "port", "intruder"); err != nil {
				return err
			}
		}
		got = v
		return set.Reserve("port", v, "me")
	})
	if err != nil {
		t.Fatal(err)
	}
	if runs != 2 || got != "1" {
		t.Fatalf("fn ran %d times and took %s; want 2 runs and port 1", runs, got)
	}
}

func TestBadNames(t *testing.T) {
	t.Parallel()
	srv := etcdtest.New(t)
	r := newRes(t, srv.Client(), "/edgekit/bad/ccrm/reservations/")
	ctx := context.Background()
	if err := r.Update(ctx, "a/b", func(executor.ReservationSet) error { return nil }); err == nil {
		t.Error("a cloudlet name with '/' was accepted")
	}
	for _, kv := range [][3]string{{"", "1", "o"}, {"k/x", "1", "o"}, {"port", "", "o"}, {"port", "1", ""}} {
		err := r.Update(ctx, "site", func(set executor.ReservationSet) error {
			_ = set.Reserve(kv[0], kv[1], kv[2]) // the error must come back even if fn drops it
			return nil
		})
		if err == nil {
			t.Errorf("Reserve(%q, %q, %q) was accepted", kv[0], kv[1], kv[2])
		}
	}
	if _, err := reservations.New(srv.Client(), "no-slash", reservations.Options{}); err == nil {
		t.Error("a prefix without a trailing '/' was accepted")
	}
}

// Collect deletes the values of owners whose object is gone, and only
// those.
func TestCollect(t *testing.T) {
	t.Parallel()
	srv := etcdtest.New(t)
	cli := srv.Client()
	const store = "/edgekit/gc/"
	r := newRes(t, cli, store+reservations.Prefix)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := cli.Put(ctx, store+"ClusterInst/name=alive,organization=dev", "{}"); err != nil {
		t.Fatal(err)
	}
	alive, gone, other := "ClusterInst:name=alive,organization=dev", "ClusterInst:name=gone,organization=dev", "someone"
	if err := r.Update(ctx, "site1", func(set executor.ReservationSet) error {
		return errors.Join(set.Reserve("subnet", "10.0.1.0/24", alive), set.Reserve("subnet", "10.0.2.0/24", gone),
			set.Reserve("port", "7", gone), set.Reserve("port", "8", other))
	}); err != nil {
		t.Fatal(err)
	}
	n, err := r.Collect(ctx, reservations.StoreOwners(store))
	if err != nil || n != 2 {
		t.Fatalf("Collect = %d, %v; want 2 values of the gone owner", n, err)
	}
	snap, _ := r.Snapshot(ctx, "site1")
	if snap["subnet"]["10.0.1.0/24"] != alive || snap["port"]["8"] != other || len(snap["subnet"])+len(snap["port"]) != 2 {
		t.Fatalf("after Collect: %v", snap)
	}
}
