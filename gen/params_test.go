package gen_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/edgekit/edgekit/gen"
	"github.com/edgekit/edgekit/internal/plugintest"
)

// badParams are plugin parameters that must fail, each with the text its
// error must hold: the entry or name at fault, in the plugin's words.
var badParams = []struct{ param, want string }{
	{"features=", "features is empty"},
	{"features", "features is empty"},
	{"=", `"=" has no name`},
	{"=fields", `"=fields" has no name`},
	{",,,", `",,," has an empty entry (number 1)`},
	{"features=fields,", `"features=fields," has an empty entry (number 2)`},
	{"paths=import,,features=fields", "has an empty entry (number 2)"},
	{"features=fields,features=clone", "features is given twice (features=fields and features=clone)"},
	{"features=fields,features=fields", "features is given twice"},
	{"paths=import,paths=import", "paths is given twice"},
	{"Ma.proto=x/a,Ma.proto=x/b", "Ma.proto is given twice"},
	{"foo=1", `unknown parameter "foo" in "foo=1"`},
	{"foo", `unknown parameter "foo"`},
	{"feature=fields", `unknown parameter "feature"`},
	{"Ma.proto", `"Ma.proto" maps no file`},
	{"M=x", `"M=x" maps no file`},
	{"features=fields++clone", "features=fields++clone has an empty feature name"},
	{"features=+fields", "has an empty feature name"},
	{"features=all+fields", `combines "all" with other features`},
	{"features=clone+clone", `feature "clone" is named twice`},
	{"features=fields+bogus", `unknown feature "bogus" in features=fields+bogus (known: fields, clone,`},
}

func TestParseParameterRefuses(t *testing.T) {
	t.Parallel()
	for _, c := range badParams {
		_, err := gen.ParseParameter(c.param)
		if !errors.Is(err, gen.ErrParameter) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("ParseParameter(%q) = %v; want an ErrParameter holding %q", c.param, err, c.want)
		}
	}
}

func TestParseParameterAccepts(t *testing.T) {
	t.Parallel()
	all := gen.Features()
	cases := []struct {
		param string
		want  []string
	}{
		{"", all},
		{"features=all", all},
		{"paths=source_relative", all},
		{"module=example.com/x,Ma.proto=example.com/x/a;a,Mb.proto=example.com/x/b", all},
		{"Ma.proto=x/a,Ma.proto=x/a", all}, // the same mapping twice
		{"apilevelMa.proto=API_OPEN,default_api_level=API_OPEN,annotate_code", all},
		{"features=clone+fields", []string{"fields", "clone"}}, // run order, not given order
		{"paths=import,features=keys", []string{"keys"}},
	}
	for _, c := range cases {
		opts, err := gen.ParseParameter(c.param)
		if err != nil || !slices.Equal(opts.Features, c.want) {
			t.Errorf("ParseParameter(%q) = %v, %v; want features %v", c.param, opts.Features, err, c.want)
		}
	}
}

// TestPluginRefusesParameters runs the plugin in process as protoc would:
// a bad parameter is the response's error, and nothing is generated.
func TestPluginRefusesParameters(t *testing.T) {
	t.Parallel()
	for _, c := range badParams {
		req, err := plugintest.Request([]string{"testdata/nested", "../proto"}, []string{"nested.proto"}, c.param)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := plugintest.Run(req, plugintest.Edgekit)
		if err != nil {
			t.Fatalf("%q: %v", c.param, err)
		}
		if !strings.Contains(resp.GetError(), c.want) || len(resp.GetFile()) != 0 {
			t.Errorf("parameter %q: error %q and %d files; want an error holding %q", c.param, resp.GetError(), len(resp.GetFile()), c.want)
		}
	}
}
