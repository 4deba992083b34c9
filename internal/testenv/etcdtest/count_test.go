package etcdtest_test

import (
	"context"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/edgekit/edgekit/internal/testenv/etcdtest"
)

// TestCounter counts each kind of request a client sends and the watch
// events it receives, and the members' own counts grow by as much.
func TestCounter(t *testing.T) {
	s := etcdtest.New(t)
	c := etcdtest.NewCounter()
	cli, err := clientv3.New(clientv3.Config{Endpoints: s.Endpoints(), DialTimeout: 10 * time.Second, DialOptions: c.DialOptions()})
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	srv0, err := etcdtest.ServerCounts()
	if err != nil {
		t.Fatal(err)
	}
	wch := cli.Watch(ctx, "k/", clientv3.WithPrefix())
	// The watch is registered once a write under it is seen; the put
	// below is that write.
	put(t, cli, "k/a", "1")
	if wr := <-wch; len(wr.Events) != 1 {
		t.Fatalf("watch: %+v", wr)
	}
	if _, err := cli.Txn(ctx).If(clientv3.Compare(clientv3.Version("k/a"), ">", 0)).Then(clientv3.OpPut("k/b", "2")).Commit(); err != nil {
		t.Fatal(err)
	}
	if _, err := cli.Txn(ctx).Then(clientv3.OpGet("k/a"), clientv3.OpGet("k/b")).Commit(); err != nil {
		t.Fatal(err)
	}
	if got := get(t, cli, "k/b"); got != "2" {
		t.Fatalf("k/b = %q", got)
	}
	if _, err := cli.Delete(ctx, "k/", clientv3.WithPrefix()); err != nil {
		t.Fatal(err)
	}
	// Events: the put of k/b, then the deletes of k/a and k/b.
	for n := 0; n < 3; {
		select {
		case wr := <-wch:
			n += len(wr.Events)
		case <-ctx.Done():
			t.Fatalf("%d of 3 watch events seen", n)
		}
	}
	got := c.Counts()
	want := map[string]int64{"Put": 1, "Txn/write": 1, "Txn/read": 1, "Range": 1, "DeleteRange": 1}
	for k, n := range want {
		if got.Requests[k] != n {
			t.Errorf("%s: counted %d, want %d (%v)", k, got.Requests[k], n, got)
		}
	}
	if got.WatchEvents != 4 || got.Writes() != 3 || got.Reads() != 2 {
		t.Errorf("counted %v: %d writes, %d reads, want 4 watch events, 3 writes, 2 reads", got, got.Writes(), got.Reads())
	}
	srv1, err := etcdtest.ServerCounts()
	if err != nil {
		t.Fatal(err)
	}
	d := srv1.Sub(srv0)
	// Other tests of the package may run at the same time: the members
	// served at least this client's requests.
	if d.Requests["Txn"] < 2 || d.Requests["Put"] < 1 || d.Requests["mvcc/put"] < 2 || d.Requests["mvcc/delete"] < 1 || d.WatchEvents < 4 {
		t.Errorf("the members served %v, want at least this client's", d)
	}
}
