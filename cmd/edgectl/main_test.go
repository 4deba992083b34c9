package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/edgekit/edgekit/hosts/controller/controllertest"
	"github.com/edgekit/edgekit/internal/cli/clitest"
	"github.com/edgekit/edgekit/platforms/fake"
)

// binary is the edgectl binary the tests run, and controllerBinary the
// controller's, built once.
var binary, controllerBinary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "edgectl-bin")
	if err != nil {
		panic(err)
	}
	binary = filepath.Join(dir, "edgectl")
	controllerBinary = filepath.Join(dir, "controller")
	if out, err := exec.Command("go", "build", "-o", dir, ".", "../controller").CombinedOutput(); err != nil {
		os.RemoveAll(dir)
		panic("build: " + err.Error() + "\n" + string(out))
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// user runs edgectl as one caller of a controller.
type user struct {
	t    *testing.T
	env  []string // extra environment (EDGECTL_TOKEN, EDGECTL_CONFIG)
	args []string // leading arguments (--addr, --insecure, --token)
}

type result struct {
	out, err string
	code     int
}

// run runs the binary to its end (at most a minute; the process is killed
// by pid after that).
func (u user) run(args ...string) result {
	u.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, append(append([]string(nil), u.args...), args...)...)
	cmd.Env = append(os.Environ(), u.env...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		u.t.Fatalf("edgectl %q: %v", args, err)
	}
	return result{out: out.String(), err: errOut.String(), code: code}
}

func (r result) ok(t *testing.T, what string) result {
	t.Helper()
	if r.code != 0 {
		t.Fatalf("%s: exit code %d\nstdout:\n%s\nstderr:\n%s", what, r.code, r.out, r.err)
	}
	return r
}

func (r result) fails(t *testing.T, what string, code int, want ...string) {
	t.Helper()
	if r.code != code {
		t.Errorf("%s: exit code %d, want %d\nstdout:\n%s\nstderr:\n%s", what, r.code, code, r.out, r.err)
	}
	for _, w := range want {
		if !strings.Contains(r.err, w) {
			t.Errorf("%s: stderr lacks %q:\n%s", what, w, r.err)
		}
	}
}

// users returns an admin (token by flag), an operator (token from
// $EDGECTL_TOKEN) and a developer (token file of a context in the
// configuration file) of env.
func users(t *testing.T, env *controllertest.Env) (admin, operator, developer user) {
	dir := t.TempDir()
	noConfig := "EDGECTL_CONFIG=" + filepath.Join(dir, "none.yaml")
	plain := []string{"--addr", env.Addr, "--insecure"}
	admin = user{t: t, env: []string{noConfig}, args: append(plain, "--token", env.AdminToken())}
	operator = user{t: t, env: []string{noConfig, "EDGECTL_TOKEN=" + env.OrgToken("operator")}, args: plain}
	tokenFile := filepath.Join(dir, "developer.token")
	if err := os.WriteFile(tokenFile, []byte(env.OrgToken("developer")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	config := "EDGECTL_CONFIG=" + filepath.Join(dir, "edgectl.yaml")
	// The context's relative token file is relative to the configuration file.
	developer = user{t: t, env: []string{config}}
	developer.run("config", "set-context", "dev", "--addr", env.Addr, "--insecure", "--token-file", "developer.token").ok(t, "set-context")
	return admin, operator, developer
}

// TestLifecycleAgainstTheController drives a real controller, with the
// engine on the fake platform as every cloudlet's resource manager, through
// the real binary: a cloudlet, a cluster, an app and an instance, shown in
// every format, updated, then deleted; and the errors on the way.
func TestLifecycleAgainstTheController(t *testing.T) {
	t.Parallel()
	env := controllertest.Start(t, controllertest.Options{Host: true})
	admin, op, dev := users(t, env)

	r := admin.run("create", "flavor", "fake.small", "--vcpus", "1", "--ram-mb", "1024", "--disk-gb", "10").ok(t, "create flavor")
	if r.out != "flavor name=fake.small created\n" {
		t.Errorf("create flavor: %q", r.out)
	}
	r = op.run("create", "cloudlet", "site1", "--key.organization", "operator", "--platform-type", "fake", "--location.latitude", "45").ok(t, "create cloudlet")
	if !strings.HasPrefix(r.out, "CREATE_REQUESTED") || !strings.HasSuffix(r.out, "cloudlet organization=operator,name=site1 created: READY\n") {
		t.Errorf("create cloudlet progress:\n%s", r.out)
	}
	if strings.ContainsAny(r.out, "\r\x1b") {
		t.Errorf("progress to a pipe holds terminal control characters: %q", r.out)
	}
	r = dev.run("create", "cluster", "c1", "--key.organization", "developer", "--cloudlet-key.organization", "operator",
		"--cloudlet-key.name", "site1", "--flavor-name", "fake.small", "--deployment", "docker").ok(t, "create cluster")
	// The engine's task message is always streamed; the CREATING state
	// shows only when the controller reads the object before it is READY.
	if !strings.Contains(r.out, "Creating ClusterInst") || !strings.HasSuffix(r.out, "clusterinst name=c1,organization=developer created: READY\n") {
		t.Errorf("create cluster progress:\n%s", r.out)
	}
	app := filepath.Join(t.TempDir(), "app.yaml")
	if err := os.WriteFile(app, []byte(`key: {organization: developer, name: web, version: "1"}
deployment: docker
image_type: IMAGE_TYPE_DOCKER
image_path: nginx
ports: [{proto: PORT_PROTOCOL_TCP, internal_port: 80}]
`), 0o600); err != nil {
		t.Fatal(err)
	}
	dev.run("create", "app", "-f", app).ok(t, "create app")
	r = dev.run("create", "appinst", "web1", "--key.organization", "developer", "--app-key.organization", "developer",
		"--app-key.name", "web", "--app-key.version", "1", "--cluster-key.organization", "developer", "--cluster-key.name", "c1").ok(t, "create appinst")
	if !strings.HasSuffix(r.out, "appinst name=web1,organization=developer created: READY\n") {
		t.Errorf("create appinst progress:\n%s", r.out)
	}

	// Show in every format.
	r = op.run("show", "cloudlets").ok(t, "show cloudlets")
	if lines := strings.Split(strings.TrimSpace(r.out), "\n"); len(lines) != 2 ||
		strings.Join(strings.Fields(lines[0]), " ") != "ORGANIZATION NAME PLATFORM CRM_ON_EDGE STATE ERRORS" ||
		strings.Join(strings.Fields(lines[1]), " ") != "operator site1 fake false READY" {
		t.Errorf("cloudlet table:\n%s", r.out)
	}
	r = dev.run("show", "appinst", "web1", "-o", "json").ok(t, "show appinst json")
	var insts []map[string]any
	if err := json.Unmarshal([]byte(r.out), &insts); err != nil || len(insts) != 1 || insts[0]["state"] != "TRACKED_STATE_READY" {
		t.Errorf("appinst JSON (%v):\n%s", err, r.out)
	}
	r = dev.run("show", "clusterinstinfo", "-o", "yaml").ok(t, "show clusterinstinfo yaml")
	if !strings.Contains(r.out, "state: TRACKED_STATE_READY") || !strings.Contains(r.out, "name: c1") {
		t.Errorf("clusterinstinfo YAML:\n%s", r.out)
	}
	r = admin.run("show", "flavors", "-o", "yaml").ok(t, "show flavors yaml")
	if r.out != "- disk_gb: \"10\"\n  key:\n    name: fake.small\n  ram_mb: \"1024\"\n  vcpus: \"1\"\n" {
		t.Errorf("flavor YAML:\n%s", r.out)
	}

	// Update: the controller applies exactly the fields named.
	r = dev.run("update", "app", "organization=developer,name=web,version=1", "--annotations", "team=edge", "-o", "json").ok(t, "update app")
	var updated map[string]any
	if err := json.Unmarshal([]byte(r.out), &updated); err != nil || updated["image_path"] != "nginx" ||
		updated["annotations"].(map[string]any)["team"] != "edge" {
		t.Errorf("updated app (%v):\n%s", err, r.out)
	}

	// A cloudlet whose resource manager runs on the edge site: its access
	// key is shown once at create, and a new one by rotate-access-key.
	r = op.run("create", "cloudlet", "edge9", "--key.organization", "operator", "--platform-type", "fake", "--crm-on-edge", "--no-wait").ok(t, "create crm_on_edge cloudlet")
	first := regexp.MustCompile(`(?m)^  crm_access_key: (\S+)$`).FindStringSubmatch(r.out)
	if first == nil || strings.Count(r.out, first[1]) != 1 || !strings.Contains(r.out, "is shown only this once") {
		t.Errorf("create crm_on_edge cloudlet: the access key is not shown once:\n%s", r.out)
	}
	r = op.run("rotate-access-key", "cloudlet", "organization=operator,name=edge9").ok(t, "rotate-access-key")
	second := regexp.MustCompile(`(?m)^  crm_access_key: (\S+)$`).FindStringSubmatch(r.out)
	if second == nil || first == nil || second[1] == first[1] {
		t.Errorf("rotate-access-key did not show a new key:\n%s", r.out)
	}
	op.run("delete", "cloudlet", "edge9", "--key.organization", "operator", "--crm-override", "ignore-crm-and-transient-state").ok(t, "delete crm_on_edge cloudlet")

	// Errors.
	op.run("create", "cloudlet", "site1", "--key.organization", "operator", "--platform-type", "fake").
		fails(t, "create twice", 1, "AlreadyExists")
	op.run("update", "cloudlet", "site1", "--key.organization", "operator", "--crm-on-edge").
		fails(t, "update a create-only field", 2, "unknown flag: --crm-on-edge")
	dev.run("delete", "cloudlet", "site1", "--key.organization", "operator").
		fails(t, "delete another organization's cloudlet", 1, "PermissionDenied")
	dev.run("create", "appinst", "web2", "--key.organization", "developer", "--app-key.organization", "developer",
		"--app-key.name", "web", "--app-key.version", "1", "--cluster-key.organization", "developer", "--cluster-key.name", "nope").
		fails(t, "appinst on a missing cluster", 1, "FailedPrecondition", "nope")
	user{t: t, env: []string{"EDGECTL_CONFIG=" + filepath.Join(t.TempDir(), "x.yaml")}, args: []string{"--addr", env.Addr, "--insecure"}}.run("show", "cloudlets").
		fails(t, "no token", 1, "Unauthenticated")
	op.run("show", "clowdlets").fails(t, "unknown kind", 2, `unknown kind "clowdlets"`)

	// A change the platform fails: exit 1, the error state and the errors.
	env.Platform.FailNext(fake.OpCreateCluster, 1)
	r = dev.run("create", "cluster", "c2", "--key.organization", "developer", "--cloudlet-key.organization", "operator",
		"--cloudlet-key.name", "site1", "--flavor-name", "fake.small", "--deployment", "docker")
	r.fails(t, "failed cluster create", 1, "create clusterinst name=c2,organization=developer", "injected fault")
	if !strings.HasSuffix(r.out, "clusterinst name=c2,organization=developer create failed: CREATE_ERROR\n") {
		t.Errorf("failed create's progress:\n%s", r.out)
	}
	dev.run("delete", "cluster", "c2", "--key.organization", "developer").ok(t, "delete failed cluster")

	// Delete everything.
	r = dev.run("delete", "appinst", "web1", "--key.organization", "developer").ok(t, "delete appinst")
	if !strings.HasSuffix(r.out, "appinst name=web1,organization=developer deleted: DELETE_DONE\n") {
		t.Errorf("delete appinst:\n%s", r.out)
	}
	dev.run("delete", "app", "organization=developer,name=web,version=1").ok(t, "delete app")
	dev.run("delete", "cluster", "name=c1,organization=developer").ok(t, "delete cluster")
	op.run("delete", "cloudlet", "site1", "--key.organization", "operator").ok(t, "delete cloudlet")
	r = admin.run("show", "cloudlets", "-o", "json").ok(t, "show after delete")
	if r.out != "[]\n" {
		t.Errorf("cloudlets after delete: %s", r.out)
	}
}

// TestWatchUntilInterrupted runs `edgectl watch` as a process, sees a
// change another edgectl makes, and ends it with SIGINT: exit code 0.
func TestWatchUntilInterrupted(t *testing.T) {
	t.Parallel()
	env := controllertest.Start(t, controllertest.Options{Host: true})
	admin, _, _ := users(t, env)
	admin.run("create", "flavor", "fake.small", "--vcpus", "1", "--ram-mb", "1024", "--disk-gb", "10").ok(t, "create flavor")
	admin.run("create", "cloudlet", "site1", "--key.organization", "operator", "--platform-type", "fake").ok(t, "create cloudlet")
	admin.run("create", "cluster", "c1", "--key.organization", "developer", "--cloudlet-key.organization", "operator",
		"--cloudlet-key.name", "site1", "--flavor-name", "fake.small", "--deployment", "docker").ok(t, "create cluster")

	var out clitest.Buffer
	cmd := exec.Command(binary, "--addr", env.Addr, "--insecure", "--token", env.AdminToken(), "watch", "clusterinstinfo")
	cmd.Env = append(os.Environ(), admin.env...)
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-exited
	})
	controllertest.WaitFor(t, 30*time.Second, "the existing cluster in the watch", func() bool {
		return strings.Contains(out.String(), "c1")
	})
	admin.run("create", "cluster", "c2", "--key.organization", "developer", "--cloudlet-key.organization", "operator",
		"--cloudlet-key.name", "site1", "--flavor-name", "fake.small", "--deployment", "docker").ok(t, "create cluster")
	controllertest.WaitFor(t, 30*time.Second, "the events of another cluster's create", func() bool {
		return regexp.MustCompile(`PUT +developer +c2 +CREATING`).MatchString(out.String()) &&
			regexp.MustCompile(`PUT +developer +c2 +READY`).MatchString(out.String())
	})
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-exited:
		exited <- err // for the cleanup
		if err != nil {
			t.Errorf("watch ended with %v after SIGINT:\n%s", err, out.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatal("watch did not end after SIGINT")
	}
	if !strings.HasPrefix(out.String(), "EVENT") {
		t.Errorf("watch output:\n%s", out.String())
	}
	// Rows of other widths and states stream in: each stays lined up
	// with the header above it.
	if bad := clitest.Misaligned(out.String(), "EVENT"); bad != "" {
		t.Errorf("watch output: %s:\n%s", bad, out.String())
	}
}

// TestCookbook runs the sh blocks of docs/edgectl.md, in order, as one
// bash script against a controller whose cloudlets the engine on the fake
// platform serves, with edgectl on PATH and a configuration file whose
// current context reaches the controller as admin. Blocks after a
// "<!-- cookbook: not run -->" line are skipped.
func TestCookbook(t *testing.T) {
	t.Parallel()
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	doc, err := os.ReadFile("../../docs/edgectl.md")
	if err != nil {
		t.Fatal(err)
	}
	script := cookbookScript(string(doc))
	if strings.Count(script, "edgectl ") < 30 {
		t.Fatalf("the cookbook runs only %d edgectl commands:\n%s", strings.Count(script, "edgectl "), script)
	}
	env := controllertest.Start(t, controllertest.Options{Host: true})
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "admin.token"), []byte(env.AdminToken()), 0o600); err != nil {
		t.Fatal(err)
	}
	config := "current-context: test\ncontexts:\n  - name: test\n    addr: " + env.Addr + "\n    token-file: admin.token\n    insecure: true\n"
	if err := os.WriteFile(filepath.Join(dir, "edgectl.yaml"), []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	work := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bash, "-euo", "pipefail", "-x", "-c", script)
	cmd.Dir = work
	cmd.Env = append(os.Environ(),
		"PATH="+filepath.Dir(binary)+string(os.PathListSeparator)+os.Getenv("PATH"),
		"EDGECTL_CONFIG="+filepath.Join(dir, "edgectl.yaml"),
		"EDGECTL_TOKEN=")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the cookbook failed: %v\n%s", err, out)
	}
	if testing.Verbose() {
		t.Logf("cookbook output:\n%s", out)
	}
}

// cookbookScript returns the sh blocks of a markdown page that are not
// marked "not run", joined.
func cookbookScript(doc string) string {
	var script strings.Builder
	lines := strings.Split(doc, "\n")
	skip, in := false, false
	for _, l := range lines {
		switch {
		case in && strings.HasPrefix(l, "```"):
			in = false
		case in:
			if !skip {
				script.WriteString(l + "\n")
			}
		case strings.HasPrefix(l, "```sh"):
			in = true
		case strings.TrimSpace(l) == "<!-- cookbook: not run -->":
			skip = true
			continue
		}
		if !in && strings.TrimSpace(l) != "" && !strings.HasPrefix(l, "<!--") {
			skip = false
		}
	}
	return script.String()
}
