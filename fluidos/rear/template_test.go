package rear_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/edgekit/edgekit/fluidos"
	"github.com/edgekit/edgekit/fluidos/rear"
)

func ptr[T any](v T) *T { return &v }

func kvSchema() *fluidos.ConfigurationSchema {
	return &fluidos.ConfigurationSchema{Parameters: []*fluidos.ConfigParameter{
		{Name: "password", Type: fluidos.ParameterType_PARAMETER_TYPE_STRING, Required: true, Pattern: "[A-Za-z0-9]{8,}", Description: "access password"},
		{Name: "port", Type: fluidos.ParameterType_PARAMETER_TYPE_INT, Minimum: ptr(1024.0), Maximum: ptr(65535.0), DefaultValue: "6379"},
		{Name: "ratio", Type: fluidos.ParameterType_PARAMETER_TYPE_FLOAT, Maximum: ptr(1.0)},
		{Name: "tls", Type: fluidos.ParameterType_PARAMETER_TYPE_BOOL, Required: true, DefaultValue: "false"},
	}}
}

func TestTemplateOfEnforcesTheSchema(t *testing.T) {
	t.Parallel()
	raw, err := rear.TemplateOf(kvSchema())
	if err != nil {
		t.Fatal(err)
	}
	tmpl, err := rear.CompileTemplate(raw)
	if err != nil {
		t.Fatalf("%v\n%s", err, raw)
	}
	for _, ok := range []string{
		`{"password":"abcdefgh1"}`,
		`{"password":"abcdefgh1","port":8080,"ratio":0.5,"tls":true}`,
	} {
		if err := tmpl.Validate([]byte(ok)); err != nil {
			t.Errorf("Validate(%s) = %v", ok, err)
		}
	}
	for bad, why := range map[string]string{
		`{}`:                                     "password",
		`{"password":"short"}`:                   "/password",
		`{"password":"abcdefgh1","port":80}`:     "/port",
		`{"password":"abcdefgh1","port":"8080"}`: "/port",
		`{"password":"abcdefgh1","ratio":2}`:     "/ratio",
		`{"password":"abcdefgh1","tls":"yes"}`:   "/tls",
		`{"password":"abcdefgh1","other":1}`:     "other",
		`{"password":"abcdefgh1","port":1024.5}`: "/port",
		`{"password":"has space 12"}`:            "/password",
		`[1]`:                                    "array",
		`{"password":`:                           "not JSON",
	} {
		err := tmpl.Validate([]byte(bad))
		if !errors.Is(err, rear.ErrInvalidConfiguration) {
			t.Errorf("Validate(%s) = %v, want ErrInvalidConfiguration", bad, err)
			continue
		}
		if !strings.Contains(err.Error(), why) {
			t.Errorf("Validate(%s) = %q, want it to mention %q", bad, err, why)
		}
	}
}

func TestSchemaOfInvertsTemplateOf(t *testing.T) {
	t.Parallel()
	raw, err := rear.TemplateOf(kvSchema())
	if err != nil {
		t.Fatal(err)
	}
	got := rear.SchemaOf(raw)
	// SchemaOf lists parameters by name; kvSchema is already sorted. A
	// parameter with a default is not listed as required by the template.
	want := kvSchema()
	want.Parameters[3].Required = false
	if !proto.Equal(got, want) {
		t.Errorf("SchemaOf(TemplateOf(s)) = %v\nwant %v", got, want)
	}
	if s := rear.SchemaOf([]byte(`{"type":"object","properties":{"a":{"type":["string","null"]}}}`)); s != nil {
		t.Errorf("a property with several types gave %v", s)
	}
	if s := rear.SchemaOf([]byte(`{"type":"object","properties":{"a":{"type":"string","pattern":"x"}}}`)); s.GetParameters()[0].GetPattern() != ".*(?:x).*" {
		t.Errorf("an unanchored pattern became %q", s.GetParameters()[0].GetPattern())
	}
}

func TestTemplateOfRefusesBadSchemas(t *testing.T) {
	t.Parallel()
	bad := &fluidos.ConfigurationSchema{Parameters: []*fluidos.ConfigParameter{{Name: "x"}}}
	if _, err := rear.TemplateOf(bad); !errors.Is(err, rear.ErrInvalidTemplate) || !errors.Is(err, fluidos.ErrInvalidSchema) {
		t.Errorf("TemplateOf(untyped parameter) = %v", err)
	}
	empty, err := rear.TemplateOf(nil)
	if err != nil {
		t.Fatal(err)
	}
	tmpl, err := rear.CompileTemplate(empty)
	if err != nil {
		t.Fatal(err)
	}
	if err := tmpl.Validate(nil); err != nil {
		t.Errorf("the empty template refused no configuration: %v", err)
	}
	if err := tmpl.Validate([]byte(`{"x":1}`)); err == nil {
		t.Error("the empty template accepted a parameter")
	}
}

func TestCompileTemplateLoadsNothing(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	other := filepath.Join(dir, "other.json")
	if err := os.WriteFile(other, []byte(`{"type":"string"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, ref := range []string{"file://" + other, "http://127.0.0.1:1/schema.json", "other.json"} {
		_, err := rear.CompileTemplate([]byte(`{"type":"object","properties":{"a":{"$ref":"` + ref + `"}}}`))
		if !errors.Is(err, rear.ErrInvalidTemplate) {
			t.Errorf("a template referencing %s compiled (%v)", ref, err)
		}
	}
	for _, bad := range []string{`not json`, `{"type":"nope"}`, `{"minimum":"x"}`, `{"pattern":"("}`, strings.Repeat(" ", rear.MaxTemplateSize+1)} {
		if _, err := rear.CompileTemplate([]byte(bad)); !errors.Is(err, rear.ErrInvalidTemplate) {
			t.Errorf("CompileTemplate(%.20q) = %v, want ErrInvalidTemplate", bad, err)
		}
	}
	// Local references resolve.
	if _, err := rear.CompileTemplate([]byte(`{"$defs":{"p":{"type":"integer"}},"properties":{"a":{"$ref":"#/$defs/p"}}}`)); err != nil {
		t.Errorf("a local $ref failed: %v", err)
	}
}

func TestConfigurationData(t *testing.T) {
	t.Parallel()
	cfg := &fluidos.ServiceConfiguration{Parameters: map[string]string{"password": "abcdefgh1", "port": "8080", "ratio": "0.25", "tls": "true", "free": "x"}}
	data, err := rear.ConfigurationData(cfg, kvSchema())
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"free":"x","password":"abcdefgh1","port":8080,"ratio":0.25,"tls":true}`; string(data) != want {
		t.Errorf("ConfigurationData = %s, want %s", data, want)
	}
	for name, v := range map[string]string{"port": "80x", "ratio": "Inf", "tls": "1"} {
		bad := &fluidos.ServiceConfiguration{Parameters: map[string]string{name: v}}
		if _, err := rear.ConfigurationData(bad, kvSchema()); !errors.Is(err, rear.ErrInvalidConfiguration) || !strings.Contains(err.Error(), name) {
			t.Errorf("ConfigurationData(%s=%s) = %v", name, v, err)
		}
	}
	raw := &fluidos.ServiceConfiguration{ConfigurationData: `{"nested":{"a":1}}`, Parameters: map[string]string{"ignored": "x"}}
	if data, err := rear.ConfigurationData(raw, nil); err != nil || string(data) != raw.ConfigurationData {
		t.Errorf("configuration_data was not used as is: %s, %v", data, err)
	}
}
