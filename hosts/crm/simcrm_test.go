package crm_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/internal/notify"
	notifyv1 "github.com/edgekit/edgekit/proto/edgekit/notify/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
)

// The region benchmarks run their simulated CRMs in a child process (this
// test binary, running TestSimulatedCRMs with simCRMsEnv set), so that the
// benchmark's process holds the controller, its embedded etcd and the
// writers only: its CPU, heap and RSS are the controller's, and the
// clients' RSS is measured on its own.
const simCRMsEnv = "EDGEKIT_SIMULATED_CRMS"

// simSpec is what the child reads on its standard input (one JSON line).
type simSpec struct {
	Addr  string    `json:"addr"`
	Sites []simSite `json:"sites"`
}

type simSite struct {
	Org  string `json:"org"`
	Name string `json:"name"`
	Key  string `json:"key"`
}

// TestSimulatedCRMs is the child of the region benchmarks (it skips
// otherwise): one simulated CRM per site of the spec, each a notify stream
// over its own gRPC connection that reads everything it is sent, resumes
// from the last revision it applied when it connects again, and waits as
// long as a controller turning it away asks (RetryInfo), as a CRM does.
// It reports on file descriptor 3, a line per event: "sync <site>
// <resumed 0|1>" when a sync ended, "busy <site>" when turned away with a
// hint, "recv <round> <ns>" when an app instance change marked by a round
// of the benchmark arrived (ns from the write's start). It stops when its
// standard input closes.
func TestSimulatedCRMs(t *testing.T) {
	if os.Getenv(simCRMsEnv) == "" {
		t.Skip("the child process of the region benchmarks")
	}
	in := bufio.NewReader(os.Stdin)
	line, err := in.ReadBytes('\n')
	if err != nil {
		t.Fatal(err)
	}
	var spec simSpec
	if err := json.Unmarshal(line, &spec); err != nil {
		t.Fatalf("simulated CRMs: bad spec: %v", err)
	}
	report := os.NewFile(3, "report")
	w := bufio.NewWriter(report)
	var mu sync.Mutex
	emit := func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintf(w, format+"\n", args...)
		_ = w.Flush()
	}
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		_, _ = io.Copy(io.Discard, in) // until the parent closes it
		cancel()
	}()
	var wg sync.WaitGroup
	for i, s := range spec.Sites {
		wg.Go(func() { simulateCRM(ctx, spec.Addr, i, s, emit) })
	}
	wg.Wait()
}

// simulateCRM keeps one simulated CRM's stream up until ctx ends.
func simulateCRM(ctx context.Context, addr string, i int, s simSite, emit func(string, ...any)) {
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		emit("error %d %v", i, err)
		return
	}
	defer conn.Close()
	client := notifyv1.NewNotifyServiceClient(conn)
	hello := &notifyv1.Hello{CloudletKey: &edgeproto.CloudletKey{Organization: s.Org, Name: s.Name}, AccessKey: s.Key, Instance: "sim"}
	b := &notify.Backoff{Min: 100 * time.Millisecond, Max: 10 * time.Second}
	var applied int64
	for ctx.Err() == nil {
		synced, err := simStream(ctx, client, hello, &applied, func(resumed bool) {
			r := 0
			if resumed {
				r = 1
			}
			emit("sync %d %d", i, r)
		}, emit)
		if ctx.Err() != nil {
			return
		}
		if synced {
			b.Reset()
		}
		if hint, ok := notify.RetryAfter(err); ok {
			emit("busy %d", i)
			if !b.WaitHinted(ctx, hint) {
				return
			}
			continue
		}
		if !b.Wait(ctx) {
			return
		}
	}
}

// simStream runs one stream until it breaks.
func simStream(ctx context.Context, client notifyv1.NotifyServiceClient, hello *notifyv1.Hello, applied *int64,
	onSync func(resumed bool), emit func(string, ...any)) (synced bool, err error) {
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	st, err := client.Connect(sctx)
	if err != nil {
		return false, err
	}
	hello.ResumeRevision = *applied
	if err := st.Send(&notifyv1.ConnectRequest{Msg: &notifyv1.ConnectRequest_Hello{Hello: hello}}); err != nil {
		return false, recvErr(st)
	}
	resumed := false
	for {
		m, err := st.Recv()
		if err != nil {
			return synced, err
		}
		switch msg := m.GetMsg().(type) {
		case *notifyv1.ConnectResponse_SyncStart:
			resumed = msg.SyncStart.GetResumed()
		case *notifyv1.ConnectResponse_SyncEnd:
			synced, *applied = true, msg.SyncEnd.GetRevision()
			onSync(resumed)
		case *notifyv1.ConnectResponse_Update:
			if synced {
				*applied = max(*applied, msg.Update.GetRevision())
			}
			ai := msg.Update.GetAppInst()
			if ai == nil {
				continue
			}
			at := time.Now()
			if mark, stamp, ok := strings.Cut(ai.GetAnnotations()["round"], "@"); ok {
				if ns, err := strconv.ParseInt(stamp, 10, 64); err == nil {
					emit("recv %s %d", mark, at.Sub(time.Unix(0, ns)).Nanoseconds())
				}
			}
		}
	}
}

func recvErr(st grpc.BidiStreamingClient[notifyv1.ConnectRequest, notifyv1.ConnectResponse]) error {
	for {
		if _, err := st.Recv(); err != nil {
			return err
		}
	}
}

// simCRMs is the child process of simulated CRMs, seen from the
// benchmark.
type simCRMs struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser

	mu      sync.Mutex
	syncs   []int // syncs ended, by site
	resumed int   // of which resumed
	busy    int   // times a CRM was turned away with a hint
	errs    []string
	onRecv  func(round string, lat time.Duration)
	exited  chan struct{}
}

// startSimCRMs starts the child with one simulated CRM per site; it is
// stopped (standard input closed, then killed by pid if it lingers) in
// b.Cleanup.
func startSimCRMs(b testing.TB, addr string, sites []simSite, onRecv func(string, time.Duration)) *simCRMs {
	b.Helper()
	spec, err := json.Marshal(simSpec{Addr: addr, Sites: sites})
	if err != nil {
		b.Fatal(err)
	}
	rd, wr, err := os.Pipe()
	if err != nil {
		b.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestSimulatedCRMs$", "-test.count=1", "-test.timeout=0")
	cmd.Env = append(os.Environ(), simCRMsEnv+"=1")
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	cmd.ExtraFiles = []*os.File{wr}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	_ = wr.Close()
	s := &simCRMs{cmd: cmd, stdin: stdin, syncs: make([]int, len(sites)), onRecv: onRecv, exited: make(chan struct{})}
	b.Cleanup(func() {
		_ = stdin.Close()
		select {
		case <-s.exited:
		case <-time.After(30 * time.Second):
			_ = cmd.Process.Kill() // by pid: the child this benchmark started
			<-s.exited
		}
	})
	go func() {
		defer func() { _ = cmd.Wait(); close(s.exited) }()
		sc := bufio.NewScanner(rd)
		for sc.Scan() {
			s.line(sc.Text())
		}
		_ = rd.Close()
	}()
	if _, err := stdin.Write(append(spec, '\n')); err != nil {
		b.Fatal(err)
	}
	return s
}

func (s *simCRMs) line(l string) {
	f := strings.Fields(l)
	if len(f) < 2 {
		return
	}
	switch f[0] {
	case "recv":
		if len(f) == 3 {
			if ns, err := strconv.ParseInt(f[2], 10, 64); err == nil {
				s.onRecv(f[1], time.Duration(ns))
			}
		}
		return
	}
	i, _ := strconv.Atoi(f[1])
	s.mu.Lock()
	defer s.mu.Unlock()
	switch f[0] {
	case "sync":
		if i >= 0 && i < len(s.syncs) {
			s.syncs[i]++
			if len(f) == 3 && f[2] == "1" {
				s.resumed++
			}
		}
	case "busy":
		s.busy++
	case "error":
		s.errs = append(s.errs, l)
	}
}

// counts returns a copy of the syncs by site, and the resumed and busy
// totals.
func (s *simCRMs) counts() (syncs []int, resumed, busy int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]int(nil), s.syncs...), s.resumed, s.busy
}

// waitSynced waits until every site synced more often than before says
// (nil: at least once), or the deadline; it returns how many did not.
func (s *simCRMs) waitSynced(before []int, deadline time.Time) int {
	for {
		syncs, _, _ := s.counts()
		missing := 0
		for i, n := range syncs {
			if before == nil && n == 0 || before != nil && n <= before[i] {
				missing++
			}
		}
		if missing == 0 || time.Now().After(deadline) {
			return missing
		}
		select {
		case <-s.exited:
			return missing
		case <-time.After(10 * time.Millisecond): // polling the child's reports, bounded by the deadline
		}
	}
}

// rss is the child's resident set, in bytes.
func (s *simCRMs) rss() float64 { return rssOf(strconv.Itoa(s.cmd.Process.Pid)) }
