package fluidos

import (
	"errors"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// ValidateConfigurationSchema reports every problem of s, joined
// (errors.Join), each a *SchemaError (errors.Is ErrInvalidSchema):
//
//   - a parameter without a name (ErrEmptyValue) or named twice
//     (ErrDuplicateParameter);
//   - a type the enum does not define or UNSPECIFIED (ErrWrongType);
//   - minimum or maximum on a parameter that is not INT or FLOAT, or a
//     pattern on one that is not STRING (ErrWrongType);
//   - a NaN or infinite minimum or maximum (ErrNotANumber), a minimum above
//     the maximum (ErrMinAboveMax), a pattern that does not compile
//     (ErrInvalidRegex);
//   - a default value the parameter itself would reject.
//
// A nil schema is valid and has no parameters.
func ValidateConfigurationSchema(s *ConfigurationSchema) error {
	var errs []error
	seen := map[string]bool{}
	for i, p := range s.GetParameters() {
		bad := func(err error, format string, args ...any) {
			errs = append(errs, &SchemaError{Parameter: p.GetName(), Index: i, Err: err, Detail: fmt.Sprintf(format, args...)})
		}
		switch name := p.GetName(); {
		case name == "":
			bad(ErrEmptyValue, "parameter has no name")
		case seen[name]:
			bad(ErrDuplicateParameter, "")
		default:
			seen[name] = true
		}
		t := p.GetType()
		_, known := ParameterType_name[int32(t)]
		numeric := t == ParameterType_PARAMETER_TYPE_INT || t == ParameterType_PARAMETER_TYPE_FLOAT
		if !known || t == ParameterType_PARAMETER_TYPE_UNSPECIFIED {
			bad(ErrWrongType, "type %s is not one of STRING, INT, BOOL, FLOAT", t)
			continue
		}
		if !numeric && (p.Minimum != nil || p.Maximum != nil) {
			bad(ErrWrongType, "minimum and maximum apply to INT and FLOAT, not %s", paramTypeName(t))
		}
		if t != ParameterType_PARAMETER_TYPE_STRING && p.GetPattern() != "" {
			bad(ErrWrongType, "pattern applies to STRING, not %s", paramTypeName(t))
		}
		for _, b := range []struct {
			name string
			set  bool
			val  float64
		}{{"minimum", p.Minimum != nil, p.GetMinimum()}, {"maximum", p.Maximum != nil, p.GetMaximum()}} {
			if b.set && (math.IsNaN(b.val) || math.IsInf(b.val, 0)) {
				bad(ErrNotANumber, "%s is %s", b.name, formatFloat(b.val))
			}
		}
		if p.Minimum != nil && p.Maximum != nil && p.GetMinimum() > p.GetMaximum() {
			bad(ErrMinAboveMax, "minimum %s above maximum %s", formatFloat(p.GetMinimum()), formatFloat(p.GetMaximum()))
		}
		var re *regexp.Regexp
		if p.GetPattern() != "" {
			var err error
			if re, err = compileWhole(p.GetPattern()); err != nil {
				bad(fmt.Errorf("%w: %w", ErrInvalidRegex, err), "")
			}
		}
		if d := p.GetDefaultValue(); d != "" {
			if detail, err := checkValue(p, re, d); err != nil {
				bad(err, "default value: %s", detail)
			}
		}
	}
	return errors.Join(errs...)
}

// ValidateServiceConfiguration checks the parameters of cfg against schema.
// It first validates schema (ValidateConfigurationSchema) and returns its
// error if any. Then it reports every problem, joined (errors.Join), each a
// *ParameterError (errors.Is ErrInvalidConfiguration) naming the parameter,
// those of the schema's parameters first in schema order, then the unknown
// ones by name:
//
//   - a required parameter with neither a value nor a default value
//     (ErrMissingParameter);
//   - a parameter the schema does not define (ErrUnknownParameter);
//   - a value that does not parse as the parameter's type (ErrWrongType):
//     INT is a base-10 int64, FLOAT a finite float64, BOOL "true" or
//     "false";
//   - an INT or FLOAT value below the minimum or above the maximum
//     (ErrOutOfRange; INT values compare as float64);
//   - a STRING value that the pattern does not match as a whole
//     (ErrPatternMismatch).
//
// A nil cfg has no parameters; a nil schema defines none.
func ValidateServiceConfiguration(cfg *ServiceConfiguration, schema *ConfigurationSchema) error {
	if err := ValidateConfigurationSchema(schema); err != nil {
		return err
	}
	var errs []error
	given := cfg.GetParameters()
	defined := map[string]bool{}
	for _, p := range schema.GetParameters() {
		defined[p.GetName()] = true
		v, ok := given[p.GetName()]
		if !ok {
			if p.GetRequired() && p.GetDefaultValue() == "" {
				errs = append(errs, &ParameterError{Parameter: p.GetName(), Err: ErrMissingParameter})
			}
			continue
		}
		var re *regexp.Regexp
		if p.GetPattern() != "" {
			re, _ = compileWhole(p.GetPattern()) // compiles: the schema is valid
		}
		if detail, err := checkValue(p, re, v); err != nil {
			errs = append(errs, &ParameterError{Parameter: p.GetName(), Err: err, Detail: detail})
		}
	}
	var unknown []string
	for name := range given {
		if !defined[name] {
			unknown = append(unknown, name)
		}
	}
	slices.Sort(unknown)
	for _, name := range unknown {
		errs = append(errs, &ParameterError{Parameter: name, Err: ErrUnknownParameter})
	}
	return errors.Join(errs...)
}

// ValidateConfiguration checks cfg against the blueprint: cfg's
// BlueprintId, when set, must be b's Id (else an error matching both
// ErrInvalidConfiguration and ErrBlueprintMismatch), and its parameters
// must satisfy b's ConfigurationSchema (see ValidateServiceConfiguration).
func (b *ServiceBlueprint) ValidateConfiguration(cfg *ServiceConfiguration) error {
	if id := cfg.GetBlueprintId(); id != "" && id != b.GetId() {
		return fmt.Errorf("%w: %w: configuration names %q, blueprint is %q",
			ErrInvalidConfiguration, ErrBlueprintMismatch, id, b.GetId())
	}
	return ValidateServiceConfiguration(cfg, b.GetConfigurationSchema())
}

// checkValue checks one value against its parameter; re is the compiled
// pattern or nil. It returns a detail and the sentinel, or nil.
func checkValue(p *ConfigParameter, re *regexp.Regexp, v string) (detail string, err error) {
	var num float64
	switch p.GetType() {
	case ParameterType_PARAMETER_TYPE_INT:
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return fmt.Sprintf("%q is not an INT", v), ErrWrongType
		}
		num = float64(n)
	case ParameterType_PARAMETER_TYPE_FLOAT:
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
			return fmt.Sprintf("%q is not a finite FLOAT", v), ErrWrongType
		}
		num = f
	case ParameterType_PARAMETER_TYPE_BOOL:
		if v != "true" && v != "false" {
			return fmt.Sprintf("%q is not a BOOL (true or false)", v), ErrWrongType
		}
		return "", nil
	case ParameterType_PARAMETER_TYPE_STRING:
		if re != nil && !re.MatchString(v) {
			return fmt.Sprintf("%q does not match %q", v, p.GetPattern()), ErrPatternMismatch
		}
		return "", nil
	default:
		return fmt.Sprintf("type %s is not one of STRING, INT, BOOL, FLOAT", p.GetType()), ErrWrongType
	}
	if p.Minimum != nil && num < p.GetMinimum() {
		return fmt.Sprintf("%s below minimum %s", v, formatFloat(p.GetMinimum())), ErrOutOfRange
	}
	if p.Maximum != nil && num > p.GetMaximum() {
		return fmt.Sprintf("%s above maximum %s", v, formatFloat(p.GetMaximum())), ErrOutOfRange
	}
	return "", nil
}

// paramTypeName is the enum value name without its PARAMETER_TYPE_ prefix.
func paramTypeName(t ParameterType) string {
	return strings.TrimPrefix(t.String(), "PARAMETER_TYPE_")
}
