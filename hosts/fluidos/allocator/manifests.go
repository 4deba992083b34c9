package allocator

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/template"
	"text/template/parse"

	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/executor"
	"github.com/edgekit/edgekit/fluidos"
)

// Labels of the FLUIDOS reference on the objects of a service.
const (
	// LabelContract is set on every object of a service to the contract
	// it was bought under.
	LabelContract = "reservation.fluidos.eu/contract"
	// LabelServiceEndpoint "true" marks the Service whose ports are
	// handed to the buyer as the service's endpoints.
	LabelServiceEndpoint = "nodecore.fluidos.eu/flavor-service-endpoint"
)

// CategoryDatabase is the category of a service whose buyer also gets the
// configuration's "database".
const CategoryDatabase = "database"

// EndpointClusterDNS is the kind of a runtime endpoint whose host is a
// Service's name in the cluster's DNS (platforms/kubernetes reports it).
const EndpointClusterDNS = "cluster_dns"

// maxManifestDocuments bounds the documents of one blueprint.
const maxManifestDocuments = 100

// IsManifestBlueprint reports whether bp is in the FLUIDOS reference's
// format: templates of Kubernetes manifests (service_data), deployed on
// a Kubernetes cloudlet as those objects.
func IsManifestBlueprint(bp *fluidos.ServiceBlueprint) bool {
	for _, t := range bp.GetTemplates() {
		if t.GetServiceData() != "" {
			return true
		}
	}
	return false
}

// CheckBlueprint refuses a blueprint this node could not deploy: one in
// the reference's format on a platform that does not run Kubernetes
// manifests, or whose templates are broken (CheckManifestTemplates).
func (a *Allocator) CheckBlueprint(bp *fluidos.ServiceBlueprint) error {
	return CheckBlueprintFor(a.cfg.Platform.Features(), bp)
}

// CheckBlueprintFor is CheckBlueprint for a node whose platform has
// features f.
func CheckBlueprintFor(f executor.Features, bp *fluidos.ServiceBlueprint) error {
	if !IsManifestBlueprint(bp) {
		return nil
	}
	if !f.IsSingleKubernetesCluster {
		return fmt.Errorf("blueprint %q holds Kubernetes manifests (service_data), which only a node whose cloudlet is a Kubernetes cluster deploys (this one's platform is %q)",
			bp.GetId(), f.PlatformType)
	}
	return CheckManifestTemplates(bp)
}

// CheckManifestTemplates validates the templates of a blueprint in the
// reference's format, as it is loaded: every template has service_data
// and no body; it parses as a Go text/template; its placeholders name
// properties of the configuration schema; rendered with values of the
// schema's types, each of its documents decodes and has apiVersion, kind
// and metadata.name; no two documents name the same object. The error
// names the template and the document.
func CheckManifestTemplates(bp *fluidos.ServiceBlueprint) error {
	params := map[string]*fluidos.ConfigParameter{}
	for _, p := range bp.GetConfigurationSchema().GetParameters() {
		params[p.GetName()] = p
	}
	sample := map[string]string{}
	for name, p := range params {
		sample[name] = sampleValue(p)
	}
	var problems []string
	seen := map[string]string{}
	docs := 0
	for _, t := range bp.GetTemplates() {
		where := fmt.Sprintf("template %q", t.GetName())
		switch {
		case t.GetServiceData() == "" && t.GetBody() != "":
			problems = append(problems, where+": has a body where the blueprint's other templates have service_data (a blueprint's templates are all of one format)")
			continue
		case t.GetServiceData() == "":
			problems = append(problems, where+": no service_data")
			continue
		case t.GetBody() != "":
			problems = append(problems, where+": has both body and service_data")
			continue
		}
		tm, err := parseManifestTemplate(t.GetName(), t.GetServiceData())
		if err != nil {
			problems = append(problems, fmt.Sprintf("%s: %v", where, err))
			continue
		}
		if unknown := unknownFields(tm, params); len(unknown) > 0 {
			problems = append(problems, fmt.Sprintf("%s: placeholders {{ .%s }} name no property of the configuration schema", where, strings.Join(unknown, " }}, {{ .")))
			continue
		}
		var out bytes.Buffer
		if err := tm.Execute(&out, sample); err != nil {
			problems = append(problems, fmt.Sprintf("%s: %v", where, err))
			continue
		}
		objs, err := decodeDocuments(out.String())
		if err != nil {
			problems = append(problems, fmt.Sprintf("%s: %v", where, err))
			continue
		}
		for _, o := range objs {
			docs++
			id := o.apiVersion() + "/" + o.kind() + "/" + o.name()
			if prev, dup := seen[id]; dup {
				problems = append(problems, fmt.Sprintf("%s document %d: %s %s is also %s", where, o.doc, o.kind(), o.name(), prev))
			}
			seen[id] = fmt.Sprintf("%s document %d", where, o.doc)
		}
	}
	if docs == 0 && len(problems) == 0 {
		problems = append(problems, "no Kubernetes object in its templates")
	}
	if docs > maxManifestDocuments {
		problems = append(problems, fmt.Sprintf("%d objects: at most %d", docs, maxManifestDocuments))
	}
	if len(problems) > 0 {
		return fmt.Errorf("blueprint %q: %s", bp.GetId(), strings.Join(problems, "; "))
	}
	return nil
}

// sampleValue is a value of p's type, to render a template at load: its
// default, else its minimum, else a plain value of its type.
func sampleValue(p *fluidos.ConfigParameter) string {
	if v := p.GetDefaultValue(); v != "" {
		return v
	}
	switch p.GetType() {
	case fluidos.ParameterType_PARAMETER_TYPE_INT:
		if p.Minimum != nil {
			return strconv.FormatInt(int64(p.GetMinimum()), 10)
		}
		return "1"
	case fluidos.ParameterType_PARAMETER_TYPE_FLOAT:
		if p.Minimum != nil {
			return strconv.FormatFloat(p.GetMinimum(), 'f', -1, 64)
		}
		return "1"
	case fluidos.ParameterType_PARAMETER_TYPE_BOOL:
		return "true"
	}
	return "value"
}

// manifestFuncs are the functions of a manifest template: json (a value
// as JSON, also valid YAML: how a value with quotes or a leading '&' goes
// into a document safely) and b64enc (for a Secret's data).
var manifestFuncs = template.FuncMap{
	"json": func(v any) (string, error) {
		b, err := json.Marshal(v)
		return string(b), err
	},
	"b64enc": func(v string) string { return base64.StdEncoding.EncodeToString([]byte(v)) },
}

// parseManifestTemplate parses a manifest template: Go text/template (no
// HTML escaping), a missing key is an error.
func parseManifestTemplate(name, text string) (*template.Template, error) {
	return template.New(name).Option("missingkey=error").Funcs(manifestFuncs).Parse(text)
}

// unknownFields are the top-level fields the template reads ({{ .x }},
// {{ $.x }}) that are not parameters of the schema, sorted.
func unknownFields(t *template.Template, params map[string]*fluidos.ConfigParameter) []string {
	var trees []*parse.Tree
	for _, tt := range t.Templates() {
		trees = append(trees, tt.Tree)
	}
	var out []string
	for _, f := range fluidos.TemplateFields(trees...) {
		if params[f] == nil {
			out = append(out, f)
		}
	}
	slices.Sort(out)
	return out
}

// manifestDoc is one object of a rendered template.
type manifestDoc struct {
	doc int // 1-based, within its template
	obj map[string]any
}

func (d manifestDoc) str(path ...string) string {
	var cur any = d.obj
	for _, p := range path {
		m, ok := cur.(map[string]any)
		if !ok {
			return ""
		}
		cur = m[p]
	}
	s, _ := cur.(string)
	return s
}

func (d manifestDoc) apiVersion() string { return d.str("apiVersion") }
func (d manifestDoc) kind() string       { return d.str("kind") }
func (d manifestDoc) name() string       { return d.str("metadata", "name") }

// decodeDocuments splits a rendered template into its objects (documents
// split on a line "---"; empty ones skipped), each with apiVersion, kind
// and metadata.name.
func decodeDocuments(text string) ([]manifestDoc, error) {
	rd := utilyaml.NewYAMLReader(bufio.NewReader(strings.NewReader(text)))
	var out []manifestDoc
	for doc := 1; doc <= maxManifestDocuments+1; doc++ {
		raw, err := rd.Read()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("document %d: %v", doc, err)
		}
		var m map[string]any
		if err := yaml.Unmarshal(raw, &m); err != nil {
			return nil, fmt.Errorf("document %d does not decode: %v", doc, err)
		}
		if len(m) == 0 {
			continue
		}
		d := manifestDoc{doc: doc, obj: m}
		switch {
		case d.apiVersion() == "":
			return nil, fmt.Errorf("document %d: no apiVersion", doc)
		case d.kind() == "":
			return nil, fmt.Errorf("document %d: no kind", doc)
		case d.name() == "":
			return nil, fmt.Errorf("document %d: %s has no metadata.name", doc, d.kind())
		}
		out = append(out, d)
	}
	return nil, fmt.Errorf("more than %d documents", maxManifestDocuments)
}

// manifestApp renders a blueprint in the reference's format with the
// buyer's configuration into an App whose deployment manifest is every
// object of every template, in order: without a namespace (the platform
// puts them into the namespace of the contract's cluster), labelled with
// the contract.
func (r *renderer) manifestApp(al *fluidos.Allocation) (*edgeproto.App, error) {
	data := map[string]string{}
	for k, v := range r.data.Config {
		data[k] = v
	}
	var docs []string
	for _, t := range r.bp.GetTemplates() {
		where := fmt.Sprintf("template %q of blueprint %q", t.GetName(), r.bp.GetId())
		tm, err := parseManifestTemplate(t.GetName(), t.GetServiceData())
		if err != nil {
			return nil, r.scrub(fmt.Errorf("%s: %w", where, err))
		}
		var out bytes.Buffer
		if err := tm.Execute(&out, data); err != nil {
			return nil, r.scrub(fmt.Errorf("%s: %w", where, err))
		}
		objs, err := decodeDocuments(out.String())
		if err != nil {
			return nil, r.scrub(fmt.Errorf("%s: %w", where, err))
		}
		for _, o := range objs {
			meta, _ := o.obj["metadata"].(map[string]any)
			delete(meta, "namespace")
			labels, _ := meta["labels"].(map[string]any)
			if labels == nil {
				labels = map[string]any{}
			}
			labels[LabelContract] = al.GetContractId()
			meta["labels"] = labels
			b, err := yaml.Marshal(o.obj)
			if err != nil {
				return nil, r.scrub(fmt.Errorf("%s: document %d: %w", where, o.doc, err))
			}
			docs = append(docs, string(b))
		}
	}
	if len(docs) == 0 {
		return nil, fmt.Errorf("blueprint %q renders no Kubernetes object", r.bp.GetId())
	}
	return &edgeproto.App{
		Key:                &edgeproto.AppKey{Organization: al.GetBuyer().GetNodeId(), Name: al.GetId(), Version: "1"},
		Deployment:         "kubernetes",
		ImageType:          edgeproto.ImageType_IMAGE_TYPE_NONE,
		DeploymentManifest: strings.Join(docs, "---\n"),
	}, nil
}

// endpointService is a Service of a manifest labelled as the endpoint.
type endpointService struct {
	name  string
	ports []int64
}

// manifestShape is what the allocator reads of an App's manifest: its
// endpoint Services and whether it runs workloads (Deployments,
// StatefulSets).
func manifestShape(app *edgeproto.App) (eps []endpointService, workloads bool, err error) {
	objs, err := decodeDocuments(app.GetDeploymentManifest())
	if err != nil {
		return nil, false, err
	}
	for _, o := range objs {
		switch o.kind() {
		case "Deployment", "StatefulSet":
			workloads = true
		case "Service":
			meta, _ := o.obj["metadata"].(map[string]any)
			labels, _ := meta["labels"].(map[string]any)
			if v, _ := labels[LabelServiceEndpoint].(string); v != "true" {
				continue
			}
			s := endpointService{name: o.name()}
			spec, _ := o.obj["spec"].(map[string]any)
			ports, _ := spec["ports"].([]any)
			for _, p := range ports {
				pm, _ := p.(map[string]any)
				if n, ok := pm["port"].(float64); ok {
					s.ports = append(s.ports, int64(n))
				}
			}
			eps = append(eps, s)
		}
	}
	return eps, workloads, nil
}

// manifestCredentials are the credentials of a service of the reference's
// format, shaped like the reference's Secret: endpoints (every port of
// the endpoint Services, by their cluster DNS names, which the platform
// reports), username and password from the configuration, and database
// for the database category. endpoint is the first of the endpoints.
func (r *renderer) manifestCredentials(app *edgeproto.App, info *edgeproto.AppInstInfo, category string) (*fluidos.PeeringTargetCredentials, error) {
	eps, _, err := manifestShape(app)
	if err != nil {
		return nil, r.scrub(fmt.Errorf("the manifest of the service: %w", err))
	}
	var out []string
	for _, s := range eps {
		for _, port := range s.ports {
			found := ""
			for _, e := range info.GetRuntimeInfo().GetEndpoints() {
				if e.GetKind() == EndpointClusterDNS && int64(e.GetPort()) == port && strings.HasPrefix(e.GetHost(), s.name+".") {
					found = fmt.Sprintf("%s:%d", e.GetHost(), port)
					break
				}
			}
			if found == "" {
				return nil, fmt.Errorf("the platform reports no cluster DNS name of port %d of service %s", port, s.name)
			}
			out = append(out, found)
		}
	}
	c := &fluidos.PeeringTargetCredentials{
		Endpoints: strings.Join(out, ","),
		Username:  r.data.Config["username"],
		Password:  r.data.Config["password"],
	}
	if len(out) > 0 {
		c.Endpoint = out[0]
	}
	if category == CategoryDatabase {
		c.Database = r.data.Config["database"]
	}
	return c, nil
}
