package etcd_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/edgekit/edgekit/internal/etcd"
	"github.com/edgekit/edgekit/internal/testenv/logbuf"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// A member whose disk cannot hold its database up to the quota (and its
// WAL) is refused before etcd starts, with one line saying what it needs.
func TestEmbeddedRefusesWithoutRoomForTheQuota(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "etcd")
	_, err := etcd.StartEmbedded(context.Background(), etcd.EmbedConfig{DataDir: dir, QuotaBackendBytes: 1 << 60})
	var se *etcd.SpaceError
	if !errors.As(err, &se) {
		t.Fatalf("err %v (%T), want a *etcd.SpaceError", err, err)
	}
	msg := err.Error()
	for _, want := range []string{dir, "1 EiB", "needed", "free", "lower the database quota"} {
		if !strings.Contains(msg, want) {
			t.Errorf("%q does not say %q", msg, want)
		}
	}
	if strings.Contains(msg, "\n") {
		t.Errorf("%q is more than one line", msg)
	}
	if se.Need < 1<<60 || se.Free <= 0 || se.Free >= se.Need {
		t.Errorf("need %d, free %d", se.Need, se.Free)
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the refused member left its data directory: %v", err)
	}

	_, err = etcd.StartEmbedded(context.Background(), etcd.EmbedConfig{DataDir: dir, QuotaBackendBytes: 4096})
	if err == nil || !strings.Contains(err.Error(), "at least 1 MiB") {
		t.Errorf("a 4 KiB quota: %v", err)
	}
}

// fill writes big values until etcd refuses one for lack of space.
func fill(t *testing.T, cli *clientv3.Client, prefix string) {
	t.Helper()
	val := strings.Repeat("x", 256<<10)
	for i := range 1000 {
		_, err := cli.Put(context.Background(), fmt.Sprintf("%s%04d", prefix, i), val)
		if errors.Is(err, rpctypes.ErrNoSpace) {
			return
		}
		if err != nil {
			t.Fatalf("put %d: %v", i, err)
		}
	}
	t.Fatal("etcd still accepts writes after 1000 puts of 256 KiB")
}

// waitUntil polls cond until it holds or 30 seconds pass.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// The guard sees the NOSPACE alarm, says how to recover, and once the data
// was deleted, compacts, defragments and disarms it: writes work again
// without a restart. While the data is still there, the alarm stays on.
func TestSpaceGuardRecoversAfterDeletes(t *testing.T) {
	t.Parallel()
	// The guard is told half the member's quota: whatever the slack of
	// the database file that defragmentation gives back, the filler data
	// cannot fit in it, and the alarm must stay on until it is deleted.
	const quota = 4 << 20
	m := start(t, etcd.EmbedConfig{DataDir: t.TempDir(), QuotaBackendBytes: 2 * quota})
	cli := m.Client()
	var logs logbuf.Buffer
	changes := make(chan bool, 16)
	seen, last := false, false
	observe := func(s etcd.SpaceState) {
		if !seen || s.NoSpace != last {
			changes <- s.NoSpace
		}
		seen, last = true, s.NoSpace
		if s.Quota != quota || s.DBSize <= 0 {
			t.Errorf("the guard saw %+v\n%s", s, logs.String())
		}
	}
	g, err := etcd.NewSpaceGuard(etcd.SpaceGuardConfig{Client: cli, Recover: true, Quota: quota, Interval: 50 * time.Millisecond,
		Logger: slog.New(slog.NewTextHandler(&logs, nil)), Observe: observe})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- g.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	})
	next := func(want bool) {
		t.Helper()
		select {
		case on := <-changes:
			if on != want {
				t.Fatalf("the guard reported the alarm %v, want %v", on, want)
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("the guard did not report the alarm %v within 30s\n%s", want, logs.String())
		}
	}
	next(false)

	fill(t, cli, "/filler/")
	g.Check()
	next(true)
	if !g.NoSpace() {
		t.Fatal("NoSpace is false after the guard reported the alarm")
	}
	if !strings.Contains(logs.String(), "NOSPACE") || !strings.Contains(logs.String(), "To recover, delete objects") {
		t.Errorf("the log does not say how to recover:\n%s", logs.String())
	}
	// The data is live: compaction and defragmentation cannot make room.
	waitUntil(t, "the guard to try and give up", func() bool { return strings.Contains(logs.String(), "does not fit") })
	if _, err := cli.Put(context.Background(), "k", "v"); !errors.Is(err, rpctypes.ErrNoSpace) {
		t.Fatalf("a put while the data is still there: %v, want the NOSPACE error", err)
	}
	if _, err := cli.Get(context.Background(), "/filler/", clientv3.WithPrefix(), clientv3.WithCountOnly()); err != nil {
		t.Fatalf("a read under the alarm: %v", err)
	}

	if _, err := cli.Delete(context.Background(), "/filler/", clientv3.WithPrefix()); err != nil {
		t.Fatalf("a delete under the alarm: %v", err)
	}
	next(false)
	if _, err := cli.Put(context.Background(), "k", "v"); err != nil {
		t.Fatalf("a put after recovery: %v", err)
	}
	if !strings.Contains(logs.String(), "alarm cleared") {
		t.Errorf("the log does not say the alarm cleared:\n%s", logs.String())
	}
}
