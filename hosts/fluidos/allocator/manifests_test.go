package allocator

import (
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/executor"
	"github.com/edgekit/edgekit/fluidos"
)

// refDatabase is a blueprint in the FLUIDOS reference's format: a Secret
// of the buyer's credentials, an endpoint Service on 3306 and a
// Deployment reading the Secret, over username, password and database.
func refDatabase() *fluidos.ServiceBlueprint {
	return &fluidos.ServiceBlueprint{
		Id: "mysql", Name: "MySQL", Category: CategoryDatabase,
		ConfigurationSchema: &fluidos.ConfigurationSchema{Parameters: []*fluidos.ConfigParameter{
			{Name: "username", Type: fluidos.ParameterType_PARAMETER_TYPE_STRING, Required: true},
			{Name: "password", Type: fluidos.ParameterType_PARAMETER_TYPE_STRING, Required: true},
			{Name: "database", Type: fluidos.ParameterType_PARAMETER_TYPE_STRING, DefaultValue: "app"},
		}},
		Templates: []*fluidos.ServiceTemplate{{Name: "mysql", ServiceData: `apiVersion: v1
kind: Secret
metadata:
  name: db-credentials
  namespace: somewhere-else
stringData:
  username: "{{ .username }}"
  password: "{{ .password }}"
  database: "{{ .database }}"
---
apiVersion: v1
kind: Service
metadata:
  name: db-service
  labels:
    nodecore.fluidos.eu/flavor-service-endpoint: "true"
spec:
  selector: {app: db}
  ports:
  - port: 3306
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: db
spec:
  selector: {matchLabels: {app: db}}
  template:
    metadata: {labels: {app: db}}
    spec:
      containers:
      - name: mysql
        image: mysql:5.7
`}},
	}
}

func TestManifestTemplatesCheckedAtLoad(t *testing.T) {
	if err := CheckManifestTemplates(refDatabase()); err != nil {
		t.Fatalf("the reference's database blueprint: %v", err)
	}
	k8s := executor.Features{PlatformType: "kubernetes", IsSingleKubernetesCluster: true}
	if err := CheckBlueprintFor(k8s, refDatabase()); err != nil {
		t.Fatalf("on a Kubernetes cloudlet: %v", err)
	}
	if err := CheckBlueprintFor(executor.Features{PlatformType: "local"}, refDatabase()); err == nil || !strings.Contains(err.Error(), `"local"`) {
		t.Errorf("on the local platform: %v, want a refusal naming it", err)
	}
	if err := CheckBlueprintFor(executor.Features{PlatformType: "local"}, &fluidos.ServiceBlueprint{Id: "own",
		Templates: []*fluidos.ServiceTemplate{{Name: TemplateApp, Body: "command: x"}}}); err != nil {
		t.Errorf("edgekit's own format is left to its renderer: %v", err)
	}
	for _, tc := range []struct {
		name string
		edit func(bp *fluidos.ServiceBlueprint)
		want []string
	}{
		{"unknown placeholder", func(bp *fluidos.ServiceBlueprint) {
			bp.Templates[0].ServiceData = strings.Replace(bp.Templates[0].ServiceData, ".password", ".pasword", 1)
		}, []string{`template "mysql"`, "{{ .pasword }}", "configuration schema"}},
		{"placeholder through $ in a range", func(bp *fluidos.ServiceBlueprint) {
			bp.Templates[0].ServiceData += "{{ range $i, $e := .username }}{{ $.nope }}{{ end }}"
		}, []string{`template "mysql"`, "{{ .nope }}"}},
		{"no kind", func(bp *fluidos.ServiceBlueprint) {
			bp.Templates[0].ServiceData = strings.Replace(bp.Templates[0].ServiceData, "kind: Service\n", "", 1)
		}, []string{`template "mysql"`, "document 2", "no kind"}},
		{"no apiVersion", func(bp *fluidos.ServiceBlueprint) {
			bp.Templates[0].ServiceData = strings.Replace(bp.Templates[0].ServiceData, "apiVersion: apps/v1\n", "", 1)
		}, []string{`template "mysql"`, "document 3", "no apiVersion"}},
		{"does not decode", func(bp *fluidos.ServiceBlueprint) {
			bp.Templates[0].ServiceData = strings.Replace(bp.Templates[0].ServiceData, "  selector: {app: db}", "  selector: {app: [db", 1)
		}, []string{`template "mysql"`, "document 2", "does not decode"}},
		{"bad template syntax", func(bp *fluidos.ServiceBlueprint) {
			bp.Templates[0].ServiceData += "{{ if .username }}"
		}, []string{`template "mysql"`, "unexpected EOF"}},
		{"same object twice", func(bp *fluidos.ServiceBlueprint) {
			bp.Templates = append(bp.Templates, &fluidos.ServiceTemplate{Name: "again", ServiceData: "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: db}\n"})
		}, []string{`template "again" document 1`, `template "mysql" document 3`}},
		{"mixed formats", func(bp *fluidos.ServiceBlueprint) {
			bp.Templates = append(bp.Templates, &fluidos.ServiceTemplate{Name: "app", Body: "command: x"})
		}, []string{`template "app"`, "one format"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bp := refDatabase()
			tc.edit(bp)
			err := CheckManifestTemplates(bp)
			if err == nil {
				t.Fatal("accepted")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
		})
	}
}

func testRenderer(t *testing.T, bp *fluidos.ServiceBlueprint, params map[string]string) *renderer {
	t.Helper()
	r, err := newRenderer(bp, &fluidos.ServiceConfiguration{Parameters: params}, testAllocation(), catalog{})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func testAllocation() *fluidos.Allocation {
	return &fluidos.Allocation{Id: "a-c1", ContractId: "c1", Buyer: &fluidos.NodeIdentity{NodeId: "alice"}}
}

func TestManifestRenderedIntoTheContractsNamespaceUnescaped(t *testing.T) {
	const password = `p&ss<w>rd'`
	r := testRenderer(t, refDatabase(), map[string]string{"username": "ann", "password": password})
	app, err := r.manifestApp(testAllocation())
	if err != nil {
		t.Fatal(err)
	}
	if app.GetDeployment() != "kubernetes" || app.GetKey().GetName() != "a-c1" {
		t.Errorf("app %v", app)
	}
	docs, err := decodeDocuments(app.GetDeploymentManifest())
	if err != nil || len(docs) != 3 {
		t.Fatalf("the rendered manifest: %d documents, %v", len(docs), err)
	}
	for _, d := range docs {
		var m struct {
			Metadata struct {
				Namespace string
				Labels    map[string]string
			}
			StringData map[string]string `json:"stringData"`
		}
		b, _ := yaml.Marshal(d.obj)
		if err := yaml.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		if m.Metadata.Namespace != "" || m.Metadata.Labels[LabelContract] != "c1" {
			t.Errorf("%s %s: namespace %q labels %v, want none (the platform's) and %s=c1", d.kind(), d.name(), m.Metadata.Namespace, m.Metadata.Labels, LabelContract)
		}
		if d.kind() == "Secret" && (m.StringData["password"] != password || m.StringData["database"] != "app") {
			t.Errorf("the Secret's data %v, want the password unchanged and the default database", m.StringData)
		}
	}
	eps, workloads, err := manifestShape(app)
	if err != nil || !workloads || len(eps) != 1 || eps[0].name != "db-service" || len(eps[0].ports) != 1 || eps[0].ports[0] != 3306 {
		t.Fatalf("endpoint services %v, workloads %v, %v", eps, workloads, err)
	}

	info := &edgeproto.AppInstInfo{RuntimeInfo: &edgeproto.AppInstRuntime{Endpoints: []*edgeproto.ServiceEndpoint{
		{Kind: "cluster_ip", Host: "10.0.0.9", Port: 3306},
		{Kind: EndpointClusterDNS, Host: "db-service.ns1.svc.cluster.local", Port: 3306},
	}}}
	creds, err := r.manifestCredentials(app, info, CategoryDatabase)
	if err != nil {
		t.Fatal(err)
	}
	if creds.GetEndpoints() != "db-service.ns1.svc.cluster.local:3306" || creds.GetEndpoint() != creds.GetEndpoints() ||
		creds.GetUsername() != "ann" || creds.GetPassword() != password || creds.GetDatabase() != "app" {
		t.Errorf("credentials %v", creds)
	}
	if creds, err = r.manifestCredentials(app, info, "message-queue"); err != nil || creds.GetDatabase() != "" {
		t.Errorf("credentials of another category %v, %v: want no database", creds, err)
	}
	if _, err := r.manifestCredentials(app, &edgeproto.AppInstInfo{}, CategoryDatabase); err == nil {
		t.Error("credentials before the platform reported the endpoint's DNS name")
	}
}

func TestManifestRenderErrorsNeverQuoteTheConfiguration(t *testing.T) {
	const secret = "Sup3rSecretKind"
	bp := refDatabase()
	bp.Templates[0].ServiceData = "apiVersion: v1\nkind: {{ .password }}\nmetadata: {}\n"
	r := testRenderer(t, bp, map[string]string{"username": "ann", "password": secret})
	_, err := r.manifestApp(testAllocation())
	if err == nil {
		t.Fatal("an object without a name was rendered")
	}
	if strings.Contains(err.Error(), secret) || !strings.Contains(err.Error(), "[redacted]") || !strings.Contains(err.Error(), `template "mysql"`) {
		t.Errorf("error %q: want the template named and the value redacted", err)
	}
}
