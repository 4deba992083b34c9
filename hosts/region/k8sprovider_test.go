package region

import (
	"strings"
	"testing"

	"github.com/edgekit/edgekit/hosts/fluidos/allocator"
)

// The Kubernetes provider's blueprint is in the reference's format, its
// templates pass the node's check at load, and it is a database whose
// tag the tour selects it by (and the key-value blueprint lacks).
func TestKubernetesBlueprintIsAReferenceFormatDatabase(t *testing.T) {
	t.Parallel()
	bp := k8sBlueprint()
	if bp.GetId() != KubernetesBlueprint || bp.GetCategory() != allocator.CategoryDatabase || !allocator.IsManifestBlueprint(bp) {
		t.Fatalf("the blueprint: id %q, category %q, reference format %v", bp.GetId(), bp.GetCategory(), allocator.IsManifestBlueprint(bp))
	}
	if err := allocator.CheckManifestTemplates(bp); err != nil {
		t.Fatal(err)
	}
	has := func(tags []string, tag string) bool {
		for _, x := range tags {
			if x == tag {
				return true
			}
		}
		return false
	}
	if !has(bp.GetTags(), KubernetesBlueprint) || has(blueprint().GetTags(), KubernetesBlueprint) || has(bp.GetTags(), ServiceBlueprint) {
		t.Errorf("tags: the Kubernetes blueprint %v, the key-value one %v: each solver of the tour must select one", bp.GetTags(), blueprint().GetTags())
	}
	if !strings.Contains(bp.GetTemplates()[0].GetServiceData(), "nodecore.fluidos.eu/flavor-service-endpoint") {
		t.Error("the blueprint labels no Service as its endpoint")
	}
}

func TestEndpointNamespace(t *testing.T) {
	t.Parallel()
	for endpoints, want := range map[string]string{
		"db-service.c-123.svc.cluster.local:3306":                                 "c-123",
		"admin.c-1.svc.cluster.local:8080, db-service.c-1.svc.cluster.local:3306": "c-1",
		"db-service.c-1.svc.cluster.local:3307":                                   "",
		"db-service.svc.cluster.local:3306":                                       "",
		"":                                                                        "",
		"db-service.a.b.svc.cluster.local:3306":                                   "",
		"db-service.c-9.svc.cluster.local:3306,db-service.c-9.svc.cluster.local:33060": "c-9",
	} {
		got, err := endpointNamespace(endpoints, 3306)
		if got != want || (err == nil) != (want != "") {
			t.Errorf("endpointNamespace(%q) = %q, %v; want %q", endpoints, got, err, want)
		}
	}
}
