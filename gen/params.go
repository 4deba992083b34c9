package gen

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Options are the plugin parameters the engine understands.
type Options struct {
	// Features are the names of the features to run, in run order.
	Features []string
}

// ErrParameter is matched (errors.Is) by every error about the plugin
// parameter.
var ErrParameter = errors.New("bad plugin parameter")

// paramError reports a bad plugin parameter.
func paramError(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrParameter, fmt.Sprintf(format, args...))
}

// protogenParams are the parameters protogen handles itself, as
// protoc-gen-go does; M<file> and apilevelM<file> are prefixes.
var protogenParams = []string{"module", "paths", "annotate_code", "default_api_level"}

// ParseParameter reads the parameter of a CodeGeneratorRequest (what
// protoc's --go-edgekit_opt and buf's opt give, joined by ","): features=a+b
// selects features (every one when the parameter is left out), and module,
// paths, annotate_code, default_api_level, M<file> and apilevelM<file> are
// protoc-gen-go's, which protogen applies. Every entry that is empty, has no
// name, is not one of these, or repeats a name is an error naming it, as is
// an empty or unknown feature list.
func ParseParameter(param string) (Options, error) {
	var opts Options
	featuresGiven := false
	seen := map[string]string{} // name -> the entry that gave it
	if param == "" {
		opts.Features = Features()
		return opts, nil
	}
	for i, entry := range strings.Split(param, ",") {
		name, value, hasValue := strings.Cut(entry, "=")
		switch {
		case entry == "":
			return opts, paramError(`%q has an empty entry (number %d): separate parameters with one ","`, param, i+1)
		case name == "":
			return opts, paramError(`%q has no name: write name=value, as in features=fields+clone`, entry)
		}
		if prev, ok := seen[name]; ok {
			if prev == entry && isMapping(name) {
				continue // the same mapping twice says nothing new
			}
			return opts, paramError("%s is given twice (%s and %s): give it once%s", name, prev, entry, joinHint(name))
		}
		seen[name] = entry
		switch {
		case name == "features":
			if value == "" {
				return opts, paramError(`features is empty: name the features to generate joined by "+" (known: %s), or leave the parameter out to generate all`, strings.Join(Features(), ", "))
			}
			var err error
			if opts.Features, err = selectFeatures(value); err != nil {
				return opts, err
			}
			featuresGiven = true
		case isMapping(name):
			if len(name) == len(mappingPrefix(name)) || !hasValue || value == "" {
				return opts, paramError("%q maps no file: write %s<file.proto>=<Go import path>", entry, mappingPrefix(name))
			}
		case slices.Contains(protogenParams, name):
			// protogen has applied it (and refused a bad value).
		default:
			return opts, paramError("unknown parameter %q in %q: protoc-gen-go-edgekit takes features=<a+b> and, as protoc-gen-go does, %s, M<file>=<Go package> and apilevelM<file>=<level>",
				name, entry, strings.Join(protogenParams, ", "))
		}
	}
	if !featuresGiven {
		opts.Features = Features()
	}
	return opts, nil
}

// isMapping reports whether parameter name maps one file (M<file>,
// apilevelM<file>), so that it may be given once per file.
func isMapping(name string) bool { return mappingPrefix(name) != "" }

func mappingPrefix(name string) string {
	switch {
	case strings.HasPrefix(name, "apilevelM"):
		return "apilevelM"
	case strings.HasPrefix(name, "M"):
		return "M"
	}
	return ""
}

func joinHint(name string) string {
	if name == "features" {
		return `, joining the features with "+"`
	}
	return ""
}

// selectFeatures parses the value of features=: names joined by "+", or
// "all".
func selectFeatures(value string) ([]string, error) {
	all := Features()
	if value == "all" {
		return all, nil
	}
	want := map[string]bool{}
	for n := range strings.SplitSeq(value, "+") {
		switch {
		case n == "":
			return nil, paramError(`features=%s has an empty feature name: join features with one "+"`, value)
		case n == "all":
			return nil, paramError(`features=%s combines "all" with other features: "all" alone selects every feature`, value)
		case !slices.Contains(all, n):
			return nil, paramError("unknown feature %q in features=%s (known: %s)", n, value, strings.Join(all, ", "))
		case want[n]:
			return nil, paramError("feature %q is named twice in features=%s", n, value)
		}
		want[n] = true
	}
	var out []string
	for _, n := range all {
		if want[n] {
			out = append(out, n)
		}
	}
	return out, nil
}
