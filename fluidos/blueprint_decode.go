package fluidos

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"text/template/parse"

	"google.golang.org/protobuf/encoding/protojson"
	"sigs.k8s.io/yaml"
)

// The custom resource the FLUIDOS reference writes a ServiceBlueprint as.
const (
	// BlueprintGroup is the API group of the reference's ServiceBlueprint.
	BlueprintGroup = "nodecore.fluidos.eu"
	// BlueprintKind is the kind of the reference's ServiceBlueprint.
	BlueprintKind = "ServiceBlueprint"
)

// ErrInvalidBlueprintFile is matched by every error of
// DecodeServiceBlueprints about what the data holds (not about its syntax
// alone).
var ErrInvalidBlueprintFile = errors.New("invalid service blueprint")

// specFields are the fields of a reference ServiceBlueprint's spec, and
// edgekit's additions (configurationSchema, maxInstances, price) that
// the reference does not have.
var specFields = []string{"name", "description", "category", "tags", "hostingPolicies", "templates",
	"configurationSchema", "maxInstances", "price"}

// referencePolicies are the reference's names of the hosting policies.
var referencePolicies = map[string]HostingPolicy{
	"Provider": HostingPolicy_HOSTING_POLICY_PROVIDER,
	"Consumer": HostingPolicy_HOSTING_POLICY_CONSUMER,
	"Shared":   HostingPolicy_HOSTING_POLICY_SHARED,
}

// DecodeServiceBlueprints decodes one service blueprint or an array of
// them, in JSON or YAML. Each is in either form:
//
//   - edgekit's own: a ServiceBlueprint in protojson names ("id",
//     "templates": [{"name", "serviceData" or "body"}], ...);
//   - the FLUIDOS reference's custom resource: apiVersion
//     nodecore.fluidos.eu/<version>, kind ServiceBlueprint, metadata.name
//     (the blueprint's id) and a spec wrapping the fields (name,
//     description, category, tags, hostingPolicies as Provider, Consumer
//     or Shared, templates [{name, description, serviceData}]). A
//     template's serviceData is a Kubernetes manifest written as an
//     object (as the reference writes it), a list of them, or a text of
//     YAML documents. The spec may also carry edgekit's
//     configurationSchema, maxInstances and price; without a
//     configurationSchema (the reference has none), every placeholder of
//     the templates ({{ .username }}) is a required string parameter.
//     status is ignored; any other field is an error that names it.
//
// Errors name the element ("blueprint 2"), the field and what is wrong.
// What is decoded is not otherwise checked: the node checks it as it
// loads it.
func DecodeServiceBlueprints(data []byte) ([]*ServiceBlueprint, error) {
	j, err := yaml.YAMLToJSON(data)
	if err != nil {
		return nil, err
	}
	j = bytes.TrimSpace(j)
	if len(j) == 0 || string(j) == "null" {
		return nil, fmt.Errorf("%w: no blueprint in it", ErrInvalidBlueprintFile)
	}
	if j[0] != '[' {
		bp, err := decodeBlueprint(j)
		if err != nil {
			return nil, err
		}
		return []*ServiceBlueprint{bp}, nil
	}
	var raws []json.RawMessage
	if err := json.Unmarshal(j, &raws); err != nil {
		return nil, err
	}
	out := make([]*ServiceBlueprint, len(raws))
	for i, r := range raws {
		if out[i], err = decodeBlueprint(r); err != nil {
			return nil, fmt.Errorf("blueprint %d: %w", i, err)
		}
	}
	return out, nil
}

// DecodeServiceBlueprint is DecodeServiceBlueprints for data that holds
// exactly one blueprint.
func DecodeServiceBlueprint(data []byte) (*ServiceBlueprint, error) {
	bps, err := DecodeServiceBlueprints(data)
	if err != nil {
		return nil, err
	}
	if len(bps) != 1 {
		return nil, fmt.Errorf("%w: %d blueprints where one is wanted", ErrInvalidBlueprintFile, len(bps))
	}
	return bps[0], nil
}

// decodeBlueprint decodes one blueprint, in either form, from JSON.
func decodeBlueprint(j []byte) (*ServiceBlueprint, error) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(j, &top); err != nil {
		return nil, fmt.Errorf("%w: want an object: %v", ErrInvalidBlueprintFile, err)
	}
	_, spec := top["spec"]
	_, kind := top["kind"]
	_, api := top["apiVersion"]
	if !spec && !kind && !api {
		bp := &ServiceBlueprint{}
		if err := protojson.Unmarshal(j, bp); err != nil {
			return nil, err
		}
		return bp, nil
	}
	return decodeResource(top)
}

// decodeResource decodes the reference's custom resource form.
func decodeResource(top map[string]json.RawMessage) (*ServiceBlueprint, error) {
	bad := func(format string, a ...any) error {
		return fmt.Errorf("%w: %s", ErrInvalidBlueprintFile, fmt.Sprintf(format, a...))
	}
	for k := range top {
		if !slices.Contains([]string{"apiVersion", "kind", "metadata", "spec", "status"}, k) {
			return nil, bad("%s: unknown field of a ServiceBlueprint resource (want apiVersion, kind, metadata, spec)", k)
		}
	}
	var apiVersion, kind string
	if err := json.Unmarshal(orNull(top["apiVersion"]), &apiVersion); err != nil {
		return nil, bad("apiVersion: want a string: %v", err)
	}
	if err := json.Unmarshal(orNull(top["kind"]), &kind); err != nil {
		return nil, bad("kind: want a string: %v", err)
	}
	if g, v, _ := strings.Cut(apiVersion, "/"); g != BlueprintGroup || v == "" {
		return nil, bad("apiVersion %q: want %s/<version> (%s/v1alpha1)", apiVersion, BlueprintGroup, BlueprintGroup)
	}
	if kind != BlueprintKind {
		return nil, bad("kind %q: want %s", kind, BlueprintKind)
	}
	var meta struct {
		Name string `json:"name"`
	}
	if err := json.Unmarshal(orNull(top["metadata"]), &meta); err != nil {
		return nil, bad("metadata: %v", err)
	}
	if meta.Name == "" {
		return nil, bad("metadata.name: empty (it is the blueprint's id)")
	}
	var spec map[string]json.RawMessage
	if err := json.Unmarshal(orNull(top["spec"]), &spec); err != nil {
		return nil, bad("spec: want an object: %v", err)
	}
	if spec == nil {
		return nil, bad("spec: missing (the blueprint's fields go under spec)")
	}
	// The fields protojson decodes as they are: everything but the id
	// (metadata.name), the hosting policies and the templates.
	plain := map[string]json.RawMessage{}
	for k, v := range spec {
		switch {
		case !slices.Contains(specFields, k):
			return nil, bad("spec.%s: unknown field (want %s)", k, strings.Join(specFields, ", "))
		case k != "hostingPolicies" && k != "templates":
			plain[k] = v
		}
	}
	idJSON, _ := json.Marshal(meta.Name)
	plain["id"] = idJSON
	pj, err := json.Marshal(plain)
	if err != nil {
		return nil, err
	}
	bp := &ServiceBlueprint{}
	if err := protojson.Unmarshal(pj, bp); err != nil {
		return nil, bad("spec: %v", err)
	}
	var policies []string
	if err := json.Unmarshal(orNull(spec["hostingPolicies"]), &policies); err != nil {
		return nil, bad("spec.hostingPolicies: want a list of Provider, Consumer or Shared: %v", err)
	}
	for i, p := range policies {
		hp, ok := referencePolicies[p]
		if !ok {
			if v, known := HostingPolicy_value[p]; known && v != 0 {
				hp, ok = HostingPolicy(v), true
			}
		}
		if !ok {
			return nil, bad("spec.hostingPolicies[%d] %q: want Provider, Consumer or Shared", i, p)
		}
		bp.HostingPolicies = append(bp.HostingPolicies, hp)
	}
	var templates []map[string]json.RawMessage
	if err := json.Unmarshal(orNull(spec["templates"]), &templates); err != nil {
		return nil, bad("spec.templates: want a list of {name, description, serviceData}: %v", err)
	}
	for i, t := range templates {
		st, err := decodeTemplate(t)
		if err != nil {
			return nil, bad("spec.templates[%d]: %v", i, err)
		}
		bp.Templates = append(bp.Templates, st)
	}
	if bp.ConfigurationSchema == nil {
		if bp.ConfigurationSchema, err = placeholderSchema(bp.Templates); err != nil {
			return nil, bad("%v", err)
		}
	}
	return bp, nil
}

// decodeTemplate decodes one template of the custom resource form.
func decodeTemplate(t map[string]json.RawMessage) (*ServiceTemplate, error) {
	st := &ServiceTemplate{}
	for k, v := range t {
		var err error
		switch k {
		case "name":
			err = json.Unmarshal(v, &st.Name)
		case "description":
			err = json.Unmarshal(v, &st.Description)
		case "serviceData":
			st.ServiceData, err = serviceData(v)
		default:
			return nil, fmt.Errorf("%s: unknown field (want name, description, serviceData)", k)
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", k, err)
		}
	}
	if st.Name == "" {
		return nil, errors.New("name: empty")
	}
	if strings.TrimSpace(st.ServiceData) == "" {
		return nil, fmt.Errorf("template %q: serviceData: empty (want a Kubernetes manifest)", st.Name)
	}
	return st, nil
}

// serviceData turns a template's serviceData into YAML documents: a text
// stays as it is; an object is one manifest; a list holds several.
func serviceData(v json.RawMessage) (string, error) {
	v = bytes.TrimSpace(v)
	if len(v) == 0 {
		return "", errors.New("empty")
	}
	switch v[0] {
	case '"':
		var s string
		err := json.Unmarshal(v, &s)
		return s, err
	case '{':
		y, err := yaml.JSONToYAML(v)
		return string(y), err
	case '[':
		var docs []json.RawMessage
		if err := json.Unmarshal(v, &docs); err != nil {
			return "", err
		}
		parts := make([]string, len(docs))
		for i, d := range docs {
			if d = bytes.TrimSpace(d); len(d) == 0 || d[0] != '{' {
				return "", fmt.Errorf("item %d: want a Kubernetes object", i)
			}
			y, err := yaml.JSONToYAML(d)
			if err != nil {
				return "", fmt.Errorf("item %d: %w", i, err)
			}
			parts[i] = string(y)
		}
		return strings.Join(parts, "---\n"), nil
	}
	return "", fmt.Errorf("want a Kubernetes object, a list of them or a text of YAML documents, not %s", v)
}

// placeholderSchema is the configuration schema of templates that come
// without one: each field their placeholders read is a required string.
func placeholderSchema(templates []*ServiceTemplate) (*ConfigurationSchema, error) {
	seen := map[string]bool{}
	for _, t := range templates {
		tree := parse.New(t.GetName())
		tree.Mode = parse.SkipFuncCheck
		set := map[string]*parse.Tree{}
		if _, err := tree.Parse(t.GetServiceData(), "", "", set); err != nil {
			return nil, fmt.Errorf("template %q: %v", t.GetName(), err)
		}
		trees := []*parse.Tree{tree}
		for _, d := range set {
			trees = append(trees, d)
		}
		for _, f := range TemplateFields(trees...) {
			seen[f] = true
		}
	}
	names := make([]string, 0, len(seen))
	for f := range seen {
		names = append(names, f)
	}
	sort.Strings(names)
	s := &ConfigurationSchema{}
	for _, n := range names {
		s.Parameters = append(s.Parameters, &ConfigParameter{Name: n, Type: ParameterType_PARAMETER_TYPE_STRING, Required: true})
	}
	return s, nil
}

// TemplateFields are the top-level fields that the parsed Go templates
// read ({{ .x }}, {{ $.x }}), sorted and without repeats: the
// configuration values a blueprint's template uses.
func TemplateFields(trees ...*parse.Tree) []string {
	found := map[string]bool{}
	var walk func(n parse.Node)
	walk = func(n parse.Node) {
		switch n := n.(type) {
		case nil:
		case *parse.ListNode:
			if n == nil {
				return
			}
			for _, c := range n.Nodes {
				walk(c)
			}
		case *parse.ActionNode:
			walk(n.Pipe)
		case *parse.PipeNode:
			if n == nil {
				return
			}
			for _, c := range n.Cmds {
				walk(c)
			}
		case *parse.CommandNode:
			for _, a := range n.Args {
				walk(a)
			}
		case *parse.FieldNode:
			found[n.Ident[0]] = true
		case *parse.VariableNode:
			if len(n.Ident) > 1 && n.Ident[0] == "$" {
				found[n.Ident[1]] = true
			}
		case *parse.ChainNode:
			walk(n.Node)
		case *parse.IfNode:
			walk(n.Pipe)
			walk(n.List)
			walk(n.ElseList)
		case *parse.RangeNode:
			walk(n.Pipe)
			walk(n.List)
			walk(n.ElseList)
		case *parse.WithNode:
			walk(n.Pipe)
			walk(n.List)
			walk(n.ElseList)
		case *parse.TemplateNode:
			walk(n.Pipe)
		}
	}
	for _, t := range trees {
		if t != nil {
			walk(t.Root)
		}
	}
	out := make([]string, 0, len(found))
	for f := range found {
		out = append(out, f)
	}
	sort.Strings(out)
	return out
}

// orNull is raw, or JSON null when it is absent.
func orNull(raw json.RawMessage) json.RawMessage {
	if len(raw) == 0 {
		return json.RawMessage("null")
	}
	return raw
}
