package fluidos

import (
	"errors"
	"math"
	"strings"
	"testing"
)

func testSchema() *ConfigurationSchema {
	return &ConfigurationSchema{Parameters: []*ConfigParameter{
		{Name: "replicas", Type: ParameterType_PARAMETER_TYPE_INT, Required: true, Minimum: f64(1), Maximum: f64(9)},
		{Name: "ratio", Type: ParameterType_PARAMETER_TYPE_FLOAT, Minimum: f64(0), Maximum: f64(1)},
		{Name: "tls", Type: ParameterType_PARAMETER_TYPE_BOOL, Required: true, DefaultValue: "true"},
		{Name: "db_name", Type: ParameterType_PARAMETER_TYPE_STRING, Required: true, Pattern: `[a-z][a-z0-9_]*`},
		{Name: "comment", Type: ParameterType_PARAMETER_TYPE_STRING},
	}}
}

func TestValidateServiceConfiguration(t *testing.T) {
	valid := map[string]string{"replicas": "3", "db_name": "orders"}
	with := func(kv ...string) map[string]string {
		m := map[string]string{}
		for k, v := range valid {
			m[k] = v
		}
		for i := 0; i+1 < len(kv); i += 2 {
			if kv[i+1] == "<unset>" {
				delete(m, kv[i])
			} else {
				m[kv[i]] = kv[i+1]
			}
		}
		return m
	}
	for _, c := range []struct {
		name   string
		params map[string]string
		want   []problem
	}{
		{"valid with defaults", valid, nil},
		{"valid with everything", with("ratio", "0.25", "tls", "false", "comment", "anything at all"), nil},
		{"boundaries are inclusive", with("replicas", "9", "ratio", "1"), nil},
		{"missing required", with("replicas", "<unset>", "db_name", "<unset>"), []problem{
			{ErrMissingParameter, `invalid configuration: parameter "replicas": missing required parameter`},
			{ErrMissingParameter, `parameter "db_name": missing required parameter`},
		}},
		{"unknown parameters", with("zeta", "1", "alpha", "2"), []problem{
			{ErrUnknownParameter, `parameter "alpha": unknown parameter`},
			{ErrUnknownParameter, `parameter "zeta": unknown parameter`},
		}},
		{"int wrong type", with("replicas", "three"), []problem{
			{ErrWrongType, `parameter "replicas": wrong type: "three" is not an INT`},
		}},
		{"int given as float", with("replicas", "2.5"), []problem{{ErrWrongType, `"2.5" is not an INT`}}},
		{"float wrong type", with("ratio", "NaN"), []problem{{ErrWrongType, `parameter "ratio": wrong type: "NaN" is not a finite FLOAT`}}},
		{"bool wrong type", with("tls", "yes"), []problem{{ErrWrongType, `parameter "tls": wrong type: "yes" is not a BOOL`}}},
		{"int above maximum", with("replicas", "10"), []problem{{ErrOutOfRange, `parameter "replicas": out of range: 10 above maximum 9`}}},
		{"int below minimum", with("replicas", "0"), []problem{{ErrOutOfRange, `parameter "replicas": out of range: 0 below minimum 1`}}},
		{"negative float below minimum", with("ratio", "-0.1"), []problem{{ErrOutOfRange, `parameter "ratio": out of range: -0.1 below minimum 0`}}},
		{"pattern mismatch", with("db_name", "Orders"), []problem{
			{ErrPatternMismatch, `parameter "db_name": does not match pattern: "Orders" does not match "[a-z][a-z0-9_]*"`},
		}},
		{"pattern is anchored", with("db_name", "orders-2024"), []problem{{ErrPatternMismatch, `"orders-2024"`}}},
		{"several problems", with("replicas", "100", "tls", "1", "extra", "x"), []problem{
			{ErrOutOfRange, `"replicas"`},
			{ErrWrongType, `"tls"`},
			{ErrUnknownParameter, `"extra"`},
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg := &ServiceConfiguration{BlueprintId: "bp-1", Parameters: c.params}
			err := ValidateServiceConfiguration(cfg, testSchema())
			checkProblems(t, err, ErrInvalidConfiguration, c.want)
			if err != nil {
				var pe *ParameterError
				if !errors.As(err, &pe) {
					t.Errorf("errors.As(*ParameterError) failed on %v", err)
				}
			}
		})
	}
}

func TestValidateServiceConfigurationOrder(t *testing.T) {
	err := ValidateServiceConfiguration(&ServiceConfiguration{Parameters: map[string]string{"b": "1", "a": "1"}}, testSchema())
	want := strings.Join([]string{
		`invalid configuration: parameter "replicas": missing required parameter`,
		`invalid configuration: parameter "db_name": missing required parameter`,
		`invalid configuration: parameter "a": unknown parameter`,
		`invalid configuration: parameter "b": unknown parameter`,
	}, "\n")
	if err == nil || err.Error() != want {
		t.Fatalf("err =\n%v\nwant\n%s", err, want)
	}
}

func TestValidateServiceConfigurationNil(t *testing.T) {
	if err := ValidateServiceConfiguration(nil, nil); err != nil {
		t.Errorf("nil, nil: %v", err)
	}
	err := ValidateServiceConfiguration(nil, testSchema())
	if !errors.Is(err, ErrMissingParameter) {
		t.Errorf("nil configuration: %v, want missing parameters", err)
	}
	err = ValidateServiceConfiguration(&ServiceConfiguration{Parameters: map[string]string{"x": "1"}}, nil)
	if !errors.Is(err, ErrUnknownParameter) {
		t.Errorf("nil schema: %v, want unknown parameter", err)
	}
}

func TestValidateConfigurationSchema(t *testing.T) {
	str := ParameterType_PARAMETER_TYPE_STRING
	for _, c := range []struct {
		name   string
		params []*ConfigParameter
		want   []problem
	}{
		{"valid", testSchema().GetParameters(), nil},
		{"no name", []*ConfigParameter{{Type: str}}, []problem{{ErrEmptyValue, "invalid configuration schema: parameter #0: empty value"}}},
		{"duplicate", []*ConfigParameter{{Name: "a", Type: str}, {Name: "a", Type: str}}, []problem{{ErrDuplicateParameter, `parameter "a": duplicate parameter`}}},
		{"unspecified type", []*ConfigParameter{{Name: "a"}}, []problem{{ErrWrongType, `parameter "a": wrong type: type PARAMETER_TYPE_UNSPECIFIED`}}},
		{"unknown type", []*ConfigParameter{{Name: "a", Type: 17}}, []problem{{ErrWrongType, "type 17 is not one of"}}},
		{"range on string", []*ConfigParameter{{Name: "a", Type: str, Maximum: f64(3)}}, []problem{{ErrWrongType, "minimum and maximum apply to INT and FLOAT, not STRING"}}},
		{"pattern on int", []*ConfigParameter{{Name: "n", Type: ParameterType_PARAMETER_TYPE_INT, Pattern: "[0-9]+"}}, []problem{{ErrWrongType, `parameter "n": wrong type: pattern applies to STRING, not INT`}}},
		{"min above max", []*ConfigParameter{{Name: "n", Type: ParameterType_PARAMETER_TYPE_FLOAT, Minimum: f64(5), Maximum: f64(1)}},
			[]problem{{ErrMinAboveMax, `parameter "n": minimum above maximum: minimum 5 above maximum 1`}}},
		{"infinite bound", []*ConfigParameter{{Name: "n", Type: ParameterType_PARAMETER_TYPE_INT, Minimum: f64(math.Inf(-1))}},
			[]problem{{ErrNotANumber, `parameter "n": not a finite number: minimum is -Inf`}}},
		{"invalid regex", []*ConfigParameter{{Name: "s", Type: str, Pattern: "(a"}},
			[]problem{{ErrInvalidRegex, `parameter "s": invalid regular expression: error parsing regexp: missing closing )`}}},
		{"bad default", []*ConfigParameter{{Name: "n", Type: ParameterType_PARAMETER_TYPE_INT, Maximum: f64(3), DefaultValue: "4"}},
			[]problem{{ErrOutOfRange, `parameter "n": out of range: default value: 4 above maximum 3`}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := &ConfigurationSchema{Parameters: c.params}
			err := ValidateConfigurationSchema(s)
			checkProblems(t, err, ErrInvalidSchema, c.want)
			if c.want != nil {
				// A configuration checked against an invalid schema gets the
				// schema's error.
				if cerr := ValidateServiceConfiguration(&ServiceConfiguration{}, s); cerr == nil || cerr.Error() != err.Error() {
					t.Errorf("ValidateServiceConfiguration = %v, want the schema error", cerr)
				}
			}
		})
	}
}

func TestBlueprintValidateConfiguration(t *testing.T) {
	b := &ServiceBlueprint{Id: "bp-1", ConfigurationSchema: testSchema()}
	if err := b.ValidateConfiguration(&ServiceConfiguration{BlueprintId: "bp-1", Parameters: map[string]string{"replicas": "1", "db_name": "x"}}); err != nil {
		t.Errorf("valid configuration: %v", err)
	}
	if err := b.ValidateConfiguration(&ServiceConfiguration{Parameters: map[string]string{"replicas": "1", "db_name": "x"}}); err != nil {
		t.Errorf("configuration without blueprint id: %v", err)
	}
	err := b.ValidateConfiguration(&ServiceConfiguration{BlueprintId: "bp-2"})
	if !errors.Is(err, ErrBlueprintMismatch) || !errors.Is(err, ErrInvalidConfiguration) {
		t.Fatalf("err = %v, want ErrBlueprintMismatch and ErrInvalidConfiguration", err)
	}
	if want := `invalid configuration: configuration is for another blueprint: configuration names "bp-2", blueprint is "bp-1"`; err.Error() != want {
		t.Errorf("err = %q, want %q", err, want)
	}
	err = b.ValidateConfiguration(&ServiceConfiguration{BlueprintId: "bp-1"})
	if !errors.Is(err, ErrMissingParameter) {
		t.Errorf("err = %v, want missing parameters", err)
	}
}

// checkProblems asserts that err matches kind and holds exactly the
// problems of want, one per line; want empty asserts err is nil.
func checkProblems(t *testing.T, err, kind error, want []problem) {
	t.Helper()
	if len(want) == 0 {
		if err != nil {
			t.Fatalf("err = %v, want nil", err)
		}
		return
	}
	if !errors.Is(err, kind) {
		t.Fatalf("err = %v, want %v", err, kind)
	}
	if n := len(strings.Split(err.Error(), "\n")); n != len(want) {
		t.Fatalf("got %d problems, want %d:\n%v", n, len(want), err)
	}
	for _, w := range want {
		if !errors.Is(err, w.is) {
			t.Errorf("errors.Is(%v, %v) = false", err, w.is)
		}
		if !strings.Contains(err.Error(), w.text) {
			t.Errorf("err = %q, want it to contain %q", err, w.text)
		}
	}
}
