package k8senv_test

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/edgekit/edgekit/internal/testenv/k8senv"
)

// The version is written in three places: the build module (what is
// built), the package (where it looks) and the Makefile (where it builds).
func TestVersionIsTheSameInTheBuildModuleThePackageAndTheMakefile(t *testing.T) {
	gomod, err := os.ReadFile("build/go.mod")
	if err != nil {
		t.Fatal(err)
	}
	req := regexp.MustCompile(`(?m)^(?:require )?\s*k8s\.io/kubernetes (v\S+)$`).FindSubmatch(gomod)
	if req == nil || string(req[1]) != k8senv.KubernetesVersion {
		t.Fatalf("build/go.mod requires k8s.io/kubernetes %q, the package says %s", req, k8senv.KubernetesVersion)
	}
	// Each staging module is replaced by its published version of the same
	// release: v1.34.2 -> v0.34.2.
	staging := "v0" + strings.TrimPrefix(k8senv.KubernetesVersion, "v1")
	replaces := regexp.MustCompile(`(?m)^\s+(k8s\.io/\S+) => (\S+) (\S+)$`).FindAllSubmatch(gomod, -1)
	if len(replaces) < 30 {
		t.Fatalf("build/go.mod has %d replaces of staging modules, want one per staging module (31 at v1.34.2)", len(replaces))
	}
	for _, r := range replaces {
		if string(r[1]) != string(r[2]) || string(r[3]) != staging {
			t.Errorf("build/go.mod: %s => %s %s, want %s => %s %s", r[1], r[2], r[3], r[1], r[1], staging)
		}
	}
	mk, err := os.ReadFile("../../../Makefile")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(mk), "/edgekit/k8s-testenv/"+k8senv.KubernetesVersion+")") {
		t.Errorf("the Makefile's K8S_TESTENV does not end in edgekit/k8s-testenv/%s", k8senv.KubernetesVersion)
	}
}
