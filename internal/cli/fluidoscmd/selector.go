package fluidoscmd

import (
	"fmt"
	"net/url"
	"strings"

	"github.com/edgekit/edgekit/fluidos"
	"github.com/edgekit/edgekit/fluidos/rear"
)

var flavorTypes = map[string]fluidos.FlavorType{
	"k8slice": fluidos.FlavorType_FLAVOR_TYPE_K8SLICE,
	"service": fluidos.FlavorType_FLAVOR_TYPE_SERVICE,
	"vm":      fluidos.FlavorType_FLAVOR_TYPE_VM,
	"sensor":  fluidos.FlavorType_FLAVOR_TYPE_SENSOR,
}

// selector builds a selector of flavor type typ ("" for any) from
// filters written KEY=VALUE, KEY>=VALUE, KEY<=VALUE or KEY~REGEX; it is
// parsed by rear.ParseQuery, so it knows the same fields and says the
// same errors.
func selector(typ string, filters []string) (*fluidos.Selector, error) {
	if typ == "" {
		if len(filters) > 0 {
			return nil, fmt.Errorf("--filter needs --type (k8slice, service, vm or sensor)")
		}
		return nil, nil
	}
	t, ok := flavorTypes[strings.ToLower(typ)]
	if !ok {
		return nil, fmt.Errorf("--type %q: want k8slice, service, vm or sensor", typ)
	}
	q := url.Values{}
	for _, f := range filters {
		key, val, err := filterKey(f)
		if err != nil {
			return nil, err
		}
		q.Add(key, val)
	}
	return rear.ParseQuery(t, q)
}

// filterKey turns one --filter into a REAR query key and value: the
// operator is the first of >=, <=, ~ and = in it.
func filterKey(f string) (key, val string, err error) {
	i := strings.IndexAny(f, "<>~=")
	if i > 0 {
		field := strings.TrimSpace(f[:i])
		for _, op := range []struct{ sym, suffix string }{{">=", "[range][min]"}, {"<=", "[range][max]"}, {"~", "[range][regex]"}, {"=", "[match]"}} {
			if strings.HasPrefix(f[i:], op.sym) && field != "" {
				return "filter[" + field + "]" + op.suffix, strings.TrimSpace(f[i+len(op.sym):]), nil
			}
		}
	}
	return "", "", fmt.Errorf("--filter %q: want KEY=VALUE, KEY>=VALUE, KEY<=VALUE or KEY~REGEX", f)
}
