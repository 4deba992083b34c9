package allocator

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"text/template"

	"google.golang.org/protobuf/encoding/protojson"
	"sigs.k8s.io/yaml"

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/executor"
	"github.com/edgekit/edgekit/fluidos"
)

// Names of a blueprint's templates.
const (
	// TemplateApp renders the App of a service: YAML or JSON with the
	// protojson names of edgeproto.App (command, args, env_vars, ports,
	// health_check, health_check_path...). Required.
	TemplateApp = "app"
	// TemplateCredentials renders what the buyer gets once the service
	// runs: YAML or JSON with endpoint, username and password. Optional:
	// without it the buyer gets the endpoint.
	TemplateCredentials = "credentials"
)

// annotationCredentials keeps a service's credentials template on its
// App, so that its credentials render again after a restart (the
// blueprint may be gone).
const annotationCredentials = "fluidos.edgekit.io/credentials-template"

// TemplateData is what a blueprint's templates see.
type TemplateData struct {
	// Config is the buyer's configuration: every parameter of the
	// blueprint's schema, with its default value when the buyer gave none.
	Config map[string]string
	// Allocation is the allocation's identifier, Buyer and Seller the
	// nodes' identifiers.
	Allocation, Buyer, Seller string
	// Endpoint ("host:port"), Host and Port are where the service is
	// reached: set for the credentials template only.
	Endpoint, Host string
	Port           int
}

// renderer renders the templates of one blueprint for one configuration.
type renderer struct {
	bp      *fluidos.ServiceBlueprint
	data    TemplateData
	secrets []string // values scrubbed from every error
	cat     catalog
}

// newRenderer checks the buyer's configuration against the blueprint's
// schema and gathers the values the templates see.
func newRenderer(bp *fluidos.ServiceBlueprint, sc *fluidos.ServiceConfiguration, al *fluidos.Allocation, cat catalog) (*renderer, error) {
	r := &renderer{bp: bp, cat: cat, data: TemplateData{Config: map[string]string{}, Allocation: al.GetId(),
		Buyer: al.GetBuyer().GetNodeId(), Seller: al.GetSeller().GetNodeId()}}
	given := sc.GetParameters()
	for _, p := range bp.GetConfigurationSchema().GetParameters() {
		v, ok := given[p.GetName()]
		if !ok {
			v = p.GetDefaultValue()
		}
		r.data.Config[p.GetName()] = v
		if p.GetType() == fluidos.ParameterType_PARAMETER_TYPE_STRING && len(v) >= 2 {
			r.secrets = append(r.secrets, v)
		}
	}
	for name, v := range given {
		if _, ok := r.data.Config[name]; !ok && len(v) >= 2 {
			r.secrets = append(r.secrets, v)
		}
	}
	// Longest first, so that a value containing another is scrubbed whole.
	sort.Slice(r.secrets, func(i, j int) bool { return len(r.secrets[i]) > len(r.secrets[j]) })
	if err := bp.ValidateConfiguration(sc); err != nil {
		return nil, r.scrub(fmt.Errorf("the configuration does not fit blueprint %q: %w", bp.GetId(), err))
	}
	return r, nil
}

// scrub is err with every configuration value it quotes replaced, so
// that no secret reaches a log, a status or a buyer through an error.
func (r *renderer) scrub(err error) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	for _, s := range r.secrets {
		msg = strings.ReplaceAll(msg, s, "[redacted]")
	}
	return errors.New(msg)
}

// template returns the body of the blueprint's template name.
func (r *renderer) template(name string) (string, bool) {
	for _, t := range r.bp.GetTemplates() {
		if t.GetName() == name {
			return t.GetBody(), true
		}
	}
	return "", false
}

// execute renders body with data: Go text/template, no HTML escaping, a
// missing map key is an error; the functions are image (the executable
// of an image of the node's catalog) and json (a value as JSON, which is
// also valid YAML: how a value goes into a template safely).
func (r *renderer) execute(name, body string, data TemplateData) ([]byte, error) {
	t, err := template.New(name).Option("missingkey=error").Funcs(template.FuncMap{
		"image": r.cat.path,
		"json": func(v any) (string, error) {
			b, err := json.Marshal(v)
			return string(b), err
		},
	}).Parse(body)
	if err != nil {
		return nil, r.scrub(fmt.Errorf("template %q of blueprint %q: %w", name, r.bp.GetId(), err))
	}
	var out bytes.Buffer
	if err := t.Execute(&out, data); err != nil {
		return nil, r.scrub(fmt.Errorf("template %q of blueprint %q: %w", name, r.bp.GetId(), err))
	}
	return out.Bytes(), nil
}

// app renders the service's App, keyed for allocation al, and checks it:
// its command must be an image of the catalog, its ports valid.
func (r *renderer) app(al *fluidos.Allocation) (*edgeproto.App, error) {
	body, ok := r.template(TemplateApp)
	if !ok {
		return nil, fmt.Errorf("blueprint %q has no %q template", r.bp.GetId(), TemplateApp)
	}
	text, err := r.execute(TemplateApp, body, r.data)
	if err != nil {
		return nil, err
	}
	js, err := yaml.YAMLToJSON(text)
	if err != nil {
		return nil, r.scrub(fmt.Errorf("template %q of blueprint %q renders what is not YAML: %w", TemplateApp, r.bp.GetId(), err))
	}
	app := &edgeproto.App{}
	if err := protojson.Unmarshal(js, app); err != nil {
		return nil, r.scrub(fmt.Errorf("template %q of blueprint %q renders what is not an App: %w", TemplateApp, r.bp.GetId(), err))
	}
	var problems []string
	if !r.cat.has(app.GetCommand()) {
		problems = append(problems, `its command must be an image of the node's catalog ({{ image "NAME" }})`)
	}
	if err := executor.ValidatePorts(app.GetPorts()); err != nil {
		problems = append(problems, err.Error())
	}
	for _, e := range app.GetEnvVars() {
		if e.GetName() == "" || strings.ContainsAny(e.GetName(), "=\x00") {
			problems = append(problems, fmt.Sprintf("environment variable name %q", e.GetName()))
		}
		if e.GetSecretValue() != "" {
			e.Secret = true
		}
	}
	if len(problems) > 0 {
		return nil, r.scrub(fmt.Errorf("the App of blueprint %q: %s", r.bp.GetId(), strings.Join(problems, "; ")))
	}
	app.Key = &edgeproto.AppKey{Organization: al.GetBuyer().GetNodeId(), Name: al.GetId(), Version: "1"}
	if app.ImageType == edgeproto.ImageType_IMAGE_TYPE_UNSPECIFIED {
		app.ImageType = edgeproto.ImageType_IMAGE_TYPE_NONE
	}
	if app.Deployment == "" {
		app.Deployment = "process"
	}
	if body, ok := r.template(TemplateCredentials); ok {
		if app.Annotations == nil {
			app.Annotations = map[string]string{}
		}
		app.Annotations[annotationCredentials] = body
	}
	return app, nil
}

// credentialsBlueprint is what renders the credentials of a running
// service: the schema sold with the contract's flavor and the credentials
// template kept on the service's App, so that the blueprint is not needed
// (it may be gone since the sale).
func credentialsBlueprint(c *fluidos.Contract, app *edgeproto.App) *fluidos.ServiceBlueprint {
	s := c.GetFlavor().GetService()
	bp := &fluidos.ServiceBlueprint{Id: s.GetBlueprintId(), ConfigurationSchema: s.GetConfigurationSchema()}
	if body, ok := app.GetAnnotations()[annotationCredentials]; ok {
		bp.Templates = []*fluidos.ServiceTemplate{{Name: TemplateCredentials, Body: body}}
	}
	return bp
}

// credentials renders what the buyer gets of a service reached at host and
// port, from the blueprint's credentials template (or just the endpoint
// without one).
func (r *renderer) credentials(host string, port int) (*fluidos.PeeringTargetCredentials, error) {
	endpoint := host
	if port > 0 {
		endpoint = fmt.Sprintf("%s:%d", host, port)
	}
	out := &fluidos.PeeringTargetCredentials{Endpoint: endpoint}
	body, ok := r.template(TemplateCredentials)
	if !ok {
		return out, nil
	}
	data := r.data
	data.Endpoint, data.Host, data.Port = endpoint, host, port
	text, err := r.execute(TemplateCredentials, body, data)
	if err != nil {
		return nil, err
	}
	js, err := yaml.YAMLToJSON(text)
	if err != nil {
		return nil, r.scrub(fmt.Errorf("template %q of blueprint %q renders what is not YAML: %w", TemplateCredentials, r.bp.GetId(), err))
	}
	var c struct {
		Endpoint, Username, Password string
	}
	dec := json.NewDecoder(bytes.NewReader(js))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		return nil, r.scrub(fmt.Errorf("template %q of blueprint %q: want endpoint, username and password: %w", TemplateCredentials, r.bp.GetId(), err))
	}
	if c.Endpoint != "" {
		out.Endpoint = c.Endpoint
	}
	out.Username, out.Password = c.Username, c.Password
	return out, nil
}
