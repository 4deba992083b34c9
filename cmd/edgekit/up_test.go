package main

import (
	"bufio"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/edgekit/edgekit/hosts/region"
)

// appInst is what the test reads of "edgectl show appinst -o json".
type appInst struct {
	Key         struct{ Name string } `json:"key"`
	State       string                `json:"state"`
	URI         string                `json:"uri"`
	RuntimeInfo struct {
		Pids  []string `json:"pids"`
		Ports []int    `json:"ports"`
	} `json:"runtime_info"`
}

// showAppInst returns the instance called name, through the real edgectl
// with the context up wrote (no connection flags).
func (s *sandbox) showAppInst(name string) appInst {
	s.t.Helper()
	out := s.run(30*time.Second, ctlBin, "show", "appinsts", "-o", "json")
	var list []appInst
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		s.t.Fatalf("show appinsts: %v\n%s", err, out)
	}
	for _, ai := range list {
		if ai.Key.Name == name {
			return ai
		}
	}
	s.t.Fatalf("no app instance %s in:\n%s", name, out)
	return appInst{}
}

// call GETs the instance's / and returns the answer.
func call(t *testing.T, ai appInst) string {
	t.Helper()
	if len(ai.RuntimeInfo.Ports) == 0 {
		t.Fatalf("app instance %s has no port: %+v", ai.Key.Name, ai)
	}
	c := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{Proxy: nil}}
	resp, err := c.Get(fmt.Sprintf("http://%s:%d/", ai.URI, ai.RuntimeInfo.Ports[0]))
	if err != nil {
		t.Fatalf("GET app instance %s: %v", ai.Key.Name, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return strings.TrimSpace(string(b))
}

// checkStopped checks what a stopped region leaves: none of its processes
// (the hosts of info and the app processes of pids), no listener of info,
// nor any of ports, and no file outside the state directory but edgectl's
// configuration.
func (s *sandbox) checkStopped(info *region.Info, pids []int, ports []string) {
	s.t.Helper()
	for _, p := range info.Processes {
		if !gone(p.PID) {
			s.t.Errorf("%s (pid %d) still runs", p.Name, p.PID)
		}
		for role, addr := range p.Listeners {
			if addr != "" && !free(addr) {
				s.t.Errorf("%s's %s listener %s is still in use", p.Name, role, addr)
			}
		}
	}
	for _, pid := range pids {
		if !gone(pid) {
			s.t.Errorf("app process %d still runs", pid)
		}
	}
	for _, a := range ports {
		if !free(a) {
			s.t.Errorf("app port %s is still in use", a)
		}
	}
	if ps := s.processes(); len(ps) > 0 {
		s.t.Errorf("processes still run under the sandbox: %v", ps)
	}
	want := []string{filepath.Join("home", ".config", "edgekit", "edgectl.yaml")}
	if got := s.filesOutsideState(); !slices.Equal(got, want) {
		s.t.Errorf("files outside the state directory: %q, want only %q", got, want)
	}
}

// The README's first command, as a user runs it: up starts the region on a
// fresh state directory, edgectl drives it through the context up wrote,
// the tour runs (both kinds of cloudlet, an update, a FLUIDOS purchase,
// clean-up), Ctrl-C stops everything (no process, port or file left
// outside the state directory), a second up resumes what was there (an
// instance runs again and answers), and --fresh starts over.
func TestUpTourAndCleanShutdown(t *testing.T) {
	s := newSandbox(t)
	start := time.Now()
	up := s.startUp()
	ready := up.waitLine("region ready in", 90*time.Second)
	t.Logf("up to ready: %v from the start of the process (%s)", time.Since(start).Round(10*time.Millisecond), ready)
	up.waitLine("Ctrl-C stops the region", 10*time.Second)
	info, err := region.ReadInfo(s.state)
	if err != nil {
		t.Fatal(err)
	}
	// The controller's etcd serves TLS and authenticates its clients.
	if ep, err := os.ReadFile(filepath.Join(s.state, "controller", "etcd-endpoint")); err != nil || !strings.HasPrefix(string(ep), "https://") {
		t.Errorf("the controller's etcd endpoint %q (%v): want https", ep, err)
	}

	// edgectl, with nothing but the context up wrote.
	out := s.run(30*time.Second, ctlBin, "show", "cloudlets")
	for _, want := range []string{"edge1", "offsite1"} {
		if !strings.Contains(out, want) || strings.Count(out, "READY") != 2 {
			t.Fatalf("show cloudlets: want edge1 and offsite1 READY:\n%s", out)
		}
	}
	s.run(60*time.Second, ctlBin, "create", "cluster", "keep", "--key.organization", "dev", "--cloudlet-key.organization", "operator",
		"--cloudlet-key.name", "edge1", "--flavor-name", "local.small", "--deployment", "local")
	s.run(30*time.Second, ctlBin, "create", "app", "--key.organization", "dev", "--key.name", "web", "--key.version", "1",
		"--deployment", "local", "--image-type", "none", "--command", info.Executable+" serve", "--health-check", "http",
		"--health-check-path", "/healthz", "--ports", `{"proto":"PORT_PROTOCOL_HTTP","internal_port":8080}`)
	s.run(60*time.Second, ctlBin, "create", "appinst", "keeper", "--key.organization", "dev", "--app-key.organization", "dev",
		"--app-key.name", "web", "--app-key.version", "1", "--cluster-key.organization", "dev", "--cluster-key.name", "keep")
	keeper := s.showAppInst("keeper")
	if got := call(t, keeper); !strings.HasPrefix(got, "hello from pid") {
		t.Fatalf("keeper answered %q", got)
	}

	// The tour, against the running region.
	tour := s.run(120*time.Second, edgekitBin, "tour", "--state-dir", s.state)
	for _, want := range []string{
		"edge1     CRM   ClusterInst tour-edge1        READY",
		"offsite1  CCRM  ClusterInst tour-offsite1     READY",
		`GET http://127.0.0.1:`, `-> "hello from pid`, `-> "bonjour from pid`,
		"consumer bought \"provider-service-kv\" from provider",
		"credentials handed over: http://127.0.0.1:25", `/kv/tour with the credentials -> "bought through FLUIDOS"`,
		"with a wrong password -> 401", "RELEASED",
		"tour-web-edge1    DELETE_DONE", "tour-web-offsite1 DELETE_DONE", "tour-offsite1     DELETE_DONE",
		"the tour is done",
	} {
		if !strings.Contains(tour, want) {
			t.Errorf("the tour's output lacks %q", want)
		}
	}
	if t.Failed() {
		t.Fatalf("the tour:\n%s", tour)
	}
	if out := s.run(30*time.Second, ctlBin, "show", "appinsts"); strings.Contains(out, "tour-") || !strings.Contains(out, "keeper") {
		t.Fatalf("after the tour, want keeper alone:\n%s", out)
	}
	// Both CCRM replicas serve offsite1 (each opened its local platform on
	// the shared state directory and runs an engine for it).
	for _, name := range []string{"ccrm-a", "ccrm-b"} {
		b, err := os.ReadFile(filepath.Join(s.state, "logs", name+".log"))
		if err != nil {
			t.Fatal(err)
		}
		serving := false
		for _, l := range strings.Split(string(b), "\n") {
			if strings.Contains(l, `msg="engine started"`) && strings.Contains(l, "name=offsite1") {
				serving = true
			}
		}
		if !serving {
			t.Errorf("%s runs no engine for offsite1:\n%s", name, b)
		}
	}
	// The status page shows the contract the tour bought, on both nodes.
	snap := statusSnapshot(t, info)
	for _, want := range []string{`"kind":"Contract","key":"consumer/provider/c-`, `"kind":"Contract","key":"provider/c-`, `"key":"name=keeper,organization=dev"`} {
		if !strings.Contains(snap, want) {
			t.Errorf("the status page lacks %s:\n%s", want, snap)
		}
	}

	// A process of the region that dies is started again.
	var victim region.ProcessInfo
	for _, p := range info.Processes {
		if p.Name == "ccrm-b" {
			victim = p
		}
	}
	if err := syscall.Kill(victim.PID, syscall.SIGKILL); err != nil {
		t.Fatalf("kill ccrm-b (pid %d): %v", victim.PID, err)
	}
	up.waitLine("ccrm-b                     again, pid", 30*time.Second)
	if info, err = region.ReadInfo(s.state); err != nil {
		t.Fatal(err)
	}
	for _, p := range info.Processes {
		if p.Name == "ccrm-b" && (p.PID == victim.PID || gone(p.PID)) {
			t.Errorf("ccrm-b after its restart: %+v (killed pid %d)", p, victim.PID)
		}
	}

	// Ctrl-C: everything stops.
	keeperPid, _ := strconv.Atoi(keeper.RuntimeInfo.Pids[0])
	keeperPort := fmt.Sprintf("127.0.0.1:%d", keeper.RuntimeInfo.Ports[0])
	took := up.interrupt(60 * time.Second)
	t.Logf("stop: %v", took.Round(10*time.Millisecond))
	if !strings.Contains(up.output(), "1 app instances            powered off") {
		t.Errorf("up did not power off the instance")
	}
	s.checkStopped(info, []int{keeperPid}, []string{keeperPort})

	// A second up resumes: the instance runs again, in a new process.
	up = s.startUp()
	up.waitLine("region ready in", 90*time.Second)
	up.waitLine("1 app instances            powered on again", 30*time.Second)
	up.waitLine("Ctrl-C stops the region", 10*time.Second)
	if info, err = region.ReadInfo(s.state); err != nil {
		t.Fatal(err)
	}
	again := s.showAppInst("keeper")
	if again.State != "TRACKED_STATE_READY" || len(again.RuntimeInfo.Pids) == 0 || again.RuntimeInfo.Pids[0] == keeper.RuntimeInfo.Pids[0] {
		t.Fatalf("keeper after the resume: %+v (before: pids %v)", again, keeper.RuntimeInfo.Pids)
	}
	if got := call(t, again); !strings.HasPrefix(got, "hello from pid "+again.RuntimeInfo.Pids[0]) {
		t.Fatalf("keeper answered %q after the resume", got)
	}
	keeperPid, _ = strconv.Atoi(again.RuntimeInfo.Pids[0])
	up.interrupt(60 * time.Second)
	s.checkStopped(info, []int{keeperPid}, []string{fmt.Sprintf("127.0.0.1:%d", again.RuntimeInfo.Ports[0])})

	// --fresh: a new region, without what the old one had.
	up = s.startUp("--fresh")
	up.waitLine("a new region", 30*time.Second)
	up.waitLine("Ctrl-C stops the region", 90*time.Second)
	if info, err = region.ReadInfo(s.state); err != nil {
		t.Fatal(err)
	}
	if out := s.run(30*time.Second, ctlBin, "show", "appinsts"); strings.Contains(out, "keeper") {
		t.Fatalf("--fresh kept the old region's instance:\n%s", out)
	}
	up.interrupt(60 * time.Second)
	s.checkStopped(info, nil, nil)
}

// statusSnapshot logs in to the region's status page as admin and returns
// the first snapshot of its event stream.
func statusSnapshot(t *testing.T, info *region.Info) string {
	t.Helper()
	tok, err := os.ReadFile(info.AdminTokenFile)
	if err != nil {
		t.Fatal(err)
	}
	// The page is served over TLS with the controller's authority.
	caPEM, err := os.ReadFile(info.CAFile)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(caPEM)
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar, Timeout: 10 * time.Second, Transport: &http.Transport{Proxy: nil, TLSClientConfig: &tls.Config{RootCAs: pool}}}
	resp, err := c.PostForm(info.StatusPage+"login", url.Values{"token": {strings.TrimSpace(string(tok))}})
	if err != nil || resp.StatusCode != http.StatusNoContent {
		t.Fatalf("status page login: %v %v", resp, err)
	}
	resp.Body.Close()
	// Rows come from the sources as they poll: wait for the contracts.
	deadline := time.Now().Add(10 * time.Second)
	for {
		resp, err := c.Get(info.StatusPage + "events")
		if err != nil {
			t.Fatal(err)
		}
		line := ""
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			if strings.HasPrefix(sc.Text(), "data: ") {
				line = sc.Text()
				break
			}
		}
		resp.Body.Close()
		if strings.Count(line, `"kind":"Contract"`) >= 2 || time.Now().After(deadline) {
			return line
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// BenchmarkUpToReady measures edgekit up from its start to "region
// ready" (the binary built), on a new state directory and on resuming
// one; each iteration stops the region again (not timed).
func BenchmarkUpToReady(b *testing.B) {
	for _, resume := range []bool{false, true} {
		name := "new"
		if resume {
			name = "resume"
		}
		b.Run(name, func(b *testing.B) {
			s := newSandbox(b)
			if resume {
				s.startUp().interruptAfter("region ready in", b)
			}
			for b.Loop() {
				if !resume {
					b.StopTimer()
					if out, err := s.try(time.Minute, "rm", "-rf", s.state); err != nil {
						b.Fatalf("%v %s", err, out)
					}
					b.StartTimer()
				}
				up := s.startUp()
				up.waitLine("region ready in", 90*time.Second)
				b.StopTimer()
				up.interrupt(60 * time.Second)
				b.StartTimer()
			}
		})
	}
}

// interruptAfter waits for a line, then stops up.
func (u *upProc) interruptAfter(line string, tb testing.TB) {
	tb.Helper()
	u.waitLine(line, 90*time.Second)
	u.interrupt(60 * time.Second)
}

// A port of the region that another program holds stops up before it
// starts anything: one line, naming the port, what wanted it and
// --base-port, and no process of the region left behind.
func TestUpWithATakenPortSaysWhichInOneLine(t *testing.T) {
	s := newSandbox(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	port := l.Addr().(*net.TCPAddr).Port
	// The controller's status page and metrics listen on base+2.
	out, err := s.try(60*time.Second, edgekitBin, "up", "--state-dir", s.state, "--base-port", strconv.Itoa(port-2))
	if err == nil {
		t.Fatalf("up with port %d taken succeeded:\n%s", port, out)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	want := fmt.Sprintf("port %d (the controller's status page and metrics)", port)
	if len(lines) != 1 || !strings.Contains(lines[0], want) || !strings.Contains(lines[0], "--base-port") {
		t.Fatalf("up with port %d taken printed %d lines, want one naming %q and --base-port:\n%s", port, len(lines), want, out)
	}
	if ps := s.processes(); len(ps) > 0 {
		t.Errorf("processes run under the sandbox: %v", ps)
	}
}
