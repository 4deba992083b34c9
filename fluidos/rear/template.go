package rear

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/edgekit/edgekit/fluidos"
)

// MaxTemplateSize bounds a configuration template and a configuration, in
// bytes.
const MaxTemplateSize = 256 << 10

// templateURL names a template being compiled; a reference to another
// resource resolves against it and is refused.
const templateURL = "mem:///configuration-template.json"

var jsonTypes = map[fluidos.ParameterType]string{
	fluidos.ParameterType_PARAMETER_TYPE_STRING: "string",
	fluidos.ParameterType_PARAMETER_TYPE_INT:    "integer",
	fluidos.ParameterType_PARAMETER_TYPE_BOOL:   "boolean",
	fluidos.ParameterType_PARAMETER_TYPE_FLOAT:  "number",
}

// TemplateOf is the JSON Schema (draft 2020-12) that s stands for: an
// object with one property per parameter (its type, description, default,
// minimum, maximum, and pattern anchored to the whole value), the
// parameters that are required and have no default listed as required,
// and no other property allowed. A schema ValidateConfigurationSchema
// refuses is an error matching ErrInvalidTemplate.
func TemplateOf(s *fluidos.ConfigurationSchema) (json.RawMessage, error) {
	if err := fluidos.ValidateConfigurationSchema(s); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidTemplate, err)
	}
	props := map[string]any{}
	required := []string{}
	for _, p := range s.GetParameters() {
		prop := map[string]any{"type": jsonTypes[p.GetType()]}
		if d := p.GetDescription(); d != "" {
			prop["description"] = d
		}
		if p.Minimum != nil {
			prop["minimum"] = p.GetMinimum()
		}
		if p.Maximum != nil {
			prop["maximum"] = p.GetMaximum()
		}
		if pat := p.GetPattern(); pat != "" {
			prop["pattern"] = "^(?:" + pat + ")$"
		}
		if d := p.GetDefaultValue(); d != "" {
			v, err := typedValue(p.GetType(), d)
			if err != nil {
				return nil, fmt.Errorf("%w: default of %s: %w", ErrInvalidTemplate, p.GetName(), err)
			}
			prop["default"] = v
		} else if p.GetRequired() {
			required = append(required, p.GetName())
		}
		props[p.GetName()] = prop
	}
	return json.Marshal(map[string]any{
		"$schema":              "https://json-schema.org/draft/2020-12/schema",
		"type":                 "object",
		"properties":           props,
		"required":             required,
		"additionalProperties": false,
	})
}

func typedValue(t fluidos.ParameterType, v string) (any, error) {
	switch t {
	case fluidos.ParameterType_PARAMETER_TYPE_INT:
		n, err := strconv.ParseInt(v, 10, 64)
		return n, err
	case fluidos.ParameterType_PARAMETER_TYPE_FLOAT:
		return strconv.ParseFloat(v, 64)
	case fluidos.ParameterType_PARAMETER_TYPE_BOOL:
		return strconv.ParseBool(v)
	}
	return v, nil
}

// SchemaOf is the typed ConfigurationSchema a template stands for, when it
// is an object whose properties each have one scalar type (string,
// integer, number, boolean), for display and for typing parameters; nil
// when the template says more than a ConfigurationSchema can (nested
// objects, arrays, several types...). The template itself stays the
// authority on what a configuration must be.
func SchemaOf(template json.RawMessage) *fluidos.ConfigurationSchema {
	var t struct {
		Type       any                        `json:"type"`
		Properties map[string]json.RawMessage `json:"properties"`
		Required   []string                   `json:"required"`
	}
	if err := json.Unmarshal(template, &t); err != nil || (t.Type != nil && t.Type != "object") {
		return nil
	}
	names := make([]string, 0, len(t.Properties))
	for name := range t.Properties {
		names = append(names, name)
	}
	slices.Sort(names)
	s := &fluidos.ConfigurationSchema{}
	for _, name := range names {
		var prop struct {
			Type        string          `json:"type"`
			Description string          `json:"description"`
			Default     json.RawMessage `json:"default"`
			Minimum     *float64        `json:"minimum"`
			Maximum     *float64        `json:"maximum"`
			Pattern     string          `json:"pattern"`
		}
		if err := json.Unmarshal(t.Properties[name], &prop); err != nil {
			return nil
		}
		p := &fluidos.ConfigParameter{Name: name, Description: prop.Description, Minimum: prop.Minimum, Maximum: prop.Maximum, Required: slices.Contains(t.Required, name)}
		for pt, jt := range jsonTypes {
			if jt == prop.Type {
				p.Type = pt
			}
		}
		if p.Type == fluidos.ParameterType_PARAMETER_TYPE_UNSPECIFIED {
			return nil
		}
		if prop.Pattern != "" {
			p.Pattern = unanchor(prop.Pattern)
		}
		if len(prop.Default) > 0 {
			var d any
			if err := json.Unmarshal(prop.Default, &d); err != nil {
				return nil
			}
			if str, ok := d.(string); ok {
				p.DefaultValue = str
			} else {
				p.DefaultValue = string(prop.Default)
			}
		}
		s.Parameters = append(s.Parameters, p)
	}
	if fluidos.ValidateConfigurationSchema(s) != nil {
		return nil
	}
	return s
}

// unanchor turns a JSON Schema pattern (which matches anywhere) into one
// that must match a whole value.
func unanchor(p string) string {
	if strings.HasPrefix(p, "^(?:") && strings.HasSuffix(p, ")$") {
		return p[len("^(?:") : len(p)-len(")$")]
	}
	return ".*(?:" + p + ").*"
}

// Template is a compiled configuration template.
type Template struct {
	schema *jsonschema.Schema
}

// CompileTemplate compiles a JSON Schema (draft 2020-12 unless it says
// otherwise in $schema) with format assertions on. A reference to any
// other resource ($ref to a file or URL) is refused, never loaded. A
// template that is not JSON, larger than MaxTemplateSize, or not a valid
// schema is an error matching ErrInvalidTemplate.
func CompileTemplate(template []byte) (*Template, error) {
	if len(template) > MaxTemplateSize {
		return nil, fmt.Errorf("%w: %d bytes, more than %d", ErrInvalidTemplate, len(template), MaxTemplateSize)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(template))
	if err != nil {
		return nil, fmt.Errorf("%w: not JSON: %w", ErrInvalidTemplate, err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.AssertFormat()
	c.UseLoader(jsonschema.SchemeURLLoader{}) // no scheme: nothing is ever loaded
	if err := c.AddResource(templateURL, doc); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidTemplate, err)
	}
	sch, err := c.Compile(templateURL)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidTemplate, err)
	}
	return &Template{schema: sch}, nil
}

// Validate checks a configuration (a JSON value) against the template. A
// configuration that is not JSON, too large, or that the template refuses
// is an error matching ErrInvalidConfiguration that says why.
func (t *Template) Validate(data []byte) error {
	if len(data) > MaxTemplateSize {
		return fmt.Errorf("%w: %d bytes, more than %d", ErrInvalidConfiguration, len(data), MaxTemplateSize)
	}
	if len(bytes.TrimSpace(data)) == 0 {
		data = []byte("{}")
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		return fmt.Errorf("%w: not JSON: %w", ErrInvalidConfiguration, err)
	}
	if err := t.schema.Validate(v); err != nil {
		var ve *jsonschema.ValidationError
		if errors.As(err, &ve) {
			return fmt.Errorf("%w: %s", ErrInvalidConfiguration, describe(ve))
		}
		return fmt.Errorf("%w: %w", ErrInvalidConfiguration, err)
	}
	return nil
}

// describe lists the causes of a validation error, one per location in
// the configuration, without the template's internal URL.
func describe(ve *jsonschema.ValidationError) string {
	lines := strings.Split(ve.Error(), "\n")
	var out []string
	for _, l := range lines[1:] {
		if l = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(l), "- ")); l != "" {
			out = append(out, l)
		}
	}
	if len(out) == 0 {
		return lines[0]
	}
	return strings.Join(out, "; ")
}
