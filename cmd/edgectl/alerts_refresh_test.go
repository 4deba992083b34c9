package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/edgekit/edgekit/hosts/controller/controllertest"
	"github.com/edgekit/edgekit/platforms/fake"
)

// TestAlertsAndRefreshAgainstTheController runs the real binary against a
// real controller whose resource manager is the engine on the fake
// platform: a cluster that takes half of a cloudlet's vCPUs quota raises
// an alert shown by `show alerts` to the operator (not to a developer), and
// `refresh-insts app` rolls the App out to its instance, failing with exit
// code 1 when the instance's update fails.
func TestAlertsAndRefreshAgainstTheController(t *testing.T) {
	t.Parallel()
	env := controllertest.Start(t, controllertest.Options{Host: true})
	admin, op, dev := users(t, env)
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	admin.run("create", "flavor", "fake.medium", "--vcpus", "2", "--ram-mb", "4096", "--disk-gb", "40").ok(t, "create flavor")
	op.run("create", "cloudlet", "-f", write("cloudlet.yaml", `key: {organization: operator, name: site1}
platform_type: fake
resource_quotas: [{name: vCPUs, value: 4, alert_threshold: 50}]
`)).ok(t, "create cloudlet")
	dev.run("create", "cluster", "c1", "--key.organization", "developer", "--cloudlet-key.organization", "operator",
		"--cloudlet-key.name", "site1", "--flavor-name", "fake.medium", "--deployment", "docker").ok(t, "create cluster")

	var shown result
	controllertest.WaitFor(t, 30*time.Second, "the vCPUs alert in `show alerts`", func() bool {
		shown = op.run("show", "alerts").ok(t, "show alerts")
		return strings.Contains(shown.out, "vCPUs")
	})
	lines := strings.Split(strings.TrimSpace(shown.out), "\n")
	if len(lines) != 2 || !strings.HasPrefix(strings.Join(strings.Fields(lines[0]), " "), "ORGANIZATION CLOUDLET RESOURCE NAME USED QUOTA UNITS USAGE_% THRESHOLD_%") ||
		!strings.HasPrefix(strings.Join(strings.Fields(lines[1]), " "), "operator site1 vCPUs CloudletResourceUsage 2 4 50 50") {
		t.Errorf("alerts table:\n%s", shown.out)
	}
	if r := dev.run("show", "alerts").ok(t, "show alerts as a developer"); strings.Contains(r.out, "site1") {
		t.Errorf("a developer sees the operator's alerts:\n%s", r.out)
	}

	dev.run("create", "app", "-f", write("app.yaml", `key: {organization: developer, name: web, version: "1"}
deployment: docker
image_type: IMAGE_TYPE_DOCKER
image_path: nginx
`)).ok(t, "create app")
	dev.run("create", "appinst", "web1", "--key.organization", "developer", "--app-key.organization", "developer",
		"--app-key.name", "web", "--app-key.version", "1", "--cluster-key.organization", "developer", "--cluster-key.name", "c1").ok(t, "create appinst")
	dev.run("update", "app", "organization=developer,name=web,version=1", "--image-path", "nginx:2").ok(t, "update app")
	r := dev.run("refresh-insts", "app", "organization=developer,name=web,version=1", "--batch-size", "2").ok(t, "refresh-insts")
	if !strings.Contains(r.out, "UPDATE_REQUESTED  name=web1,organization=developer: Refresh requested") ||
		!strings.Contains(r.out, "Refreshed 1 instances") || !strings.HasSuffix(r.out, "refresh-insts done: READY\n") {
		t.Errorf("refresh-insts output:\n%s", r.out)
	}
	const inst = "name=web1,organization=developer"
	if n := env.Platform.Calls(fake.OpUpdateAppInst, inst); n != 1 {
		t.Errorf("the instance was updated %d times, want 1", n)
	}
	env.Platform.FailNext(fake.OpUpdateAppInst, 1)
	dev.run("refresh-insts", "app", "organization=developer,name=web,version=1").
		fails(t, "refresh with a failing instance", 1, "Aborted", inst)
}
