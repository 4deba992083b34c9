package main

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/edgekit/edgekit/hosts/controller/controllertest"
	"github.com/edgekit/edgekit/internal/cli/clitest"
	"github.com/edgekit/edgekit/platforms/fake"
)

// TestProgressAsTheUserSeesIt runs changes through the real binary against
// a real controller whose cloudlets a CCRM host serves, on a platform slow
// enough that every state is seen, and reads the progress as a user does:
// no line only repeats its state, a cloudlet's delete shows DELETING, and
// powering an instance off shows the power state in the progress, in
// `show appinsts` and in the watch table.
func TestProgressAsTheUserSeesIt(t *testing.T) {
	t.Parallel()
	env := controllertest.Start(t, controllertest.Options{Host: true})
	env.Platform.SetLatency(fake.OpAny, 100*time.Millisecond)
	admin, op, dev := users(t, env)
	// noEcho fails on a progress line whose message is its state's name.
	noEcho := func(what string, r result) {
		t.Helper()
		for _, line := range strings.Split(r.out, "\n") {
			if f := strings.Fields(line); len(f) == 2 && f[0] == f[1] {
				t.Errorf("%s: the line %q only repeats the state:\n%s", what, line, r.out)
			}
		}
	}
	admin.run("create", "flavor", "fake.small", "--vcpus", "1", "--ram-mb", "1024", "--disk-gb", "10").ok(t, "create flavor")
	r := op.run("create", "cloudlet", "site1", "--key.organization", "operator", "--platform-type", "fake").ok(t, "create cloudlet")
	noEcho("create cloudlet", r)
	r = dev.run("create", "cluster", "c1", "--key.organization", "developer", "--cloudlet-key.organization", "operator",
		"--cloudlet-key.name", "site1", "--flavor-name", "fake.small", "--deployment", "docker").ok(t, "create cluster")
	noEcho("create cluster", r)
	for _, want := range []string{"CREATING  Creating ClusterInst\n", "CREATING  Creating nodes\n", "CREATING  Cluster ready\n", "READY  ClusterInst READY\n"} {
		if !strings.Contains(r.out, want) {
			t.Errorf("create cluster: the progress lacks %q:\n%s", want, r.out)
		}
	}
	dev.run("create", "app", "web", "--key.organization", "developer", "--key.version", "1", "--deployment", "docker",
		"--image-type", "docker", "--image-path", "nginx").ok(t, "create app")
	r = dev.run("create", "appinst", "web1", "--key.organization", "developer", "--app-key.organization", "developer",
		"--app-key.name", "web", "--app-key.version", "1", "--cluster-key.organization", "developer", "--cluster-key.name", "c1").ok(t, "create appinst")
	noEcho("create appinst", r)
	if !strings.Contains(r.out, "READY  AppInst READY, power POWER_ON\n") {
		t.Errorf("create appinst: the outcome does not show the power state:\n%s", r.out)
	}

	// Power off: the progress, show and the watch table show it.
	r = dev.run("update", "appinst", "web1", "--key.organization", "developer", "--power-state", "power-off-requested").ok(t, "power off")
	noEcho("power off", r)
	if !strings.Contains(r.out, "READY  AppInst READY, power POWER_OFF\n") {
		t.Errorf("power off: the outcome does not show the power state:\n%s", r.out)
	}
	r = dev.run("show", "appinsts").ok(t, "show appinsts")
	if lines := strings.Split(strings.TrimSpace(r.out), "\n"); len(lines) != 2 ||
		!regexp.MustCompile(`\bPOWER\b`).MatchString(lines[0]) || !regexp.MustCompile(`\bREADY +POWER_OFF\b`).MatchString(lines[1]) {
		t.Errorf("show appinsts does not show the power state:\n%s", r.out)
	}
	r = dev.run("watch", "appinstinfo", "--timeout", "2s").ok(t, "watch appinstinfo")
	if !regexp.MustCompile(`\bREADY +POWER_OFF\b`).MatchString(r.out) {
		t.Errorf("the watch table does not show the power state:\n%s", r.out)
	}
	if bad := clitest.Misaligned(r.out, "EVENT"); bad != "" {
		t.Errorf("watch appinstinfo: %s:\n%s", bad, r.out)
	}

	r = dev.run("delete", "appinst", "web1", "--key.organization", "developer").ok(t, "delete appinst")
	noEcho("delete appinst", r)
	dev.run("delete", "app", "organization=developer,name=web,version=1").ok(t, "delete app")
	r = dev.run("delete", "cluster", "c1", "--key.organization", "developer").ok(t, "delete cluster")
	noEcho("delete cluster", r)
	if !strings.Contains(r.out, "DELETING  Deleting ClusterInst\n") {
		t.Errorf("delete cluster: the progress lacks DELETING:\n%s", r.out)
	}
	r = op.run("delete", "cloudlet", "site1", "--key.organization", "operator").ok(t, "delete cloudlet")
	noEcho("delete cloudlet", r)
	if !strings.Contains(r.out, "DELETING  Deleting cloudlet\n") || strings.Contains(r.out, "DELETE_REQUESTED  Deleting cloudlet") {
		t.Errorf("delete cloudlet: the progress does not show DELETING with the engine's task:\n%s", r.out)
	}
}
