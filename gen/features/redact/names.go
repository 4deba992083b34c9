package redact

import "github.com/edgekit/edgekit/gen"

func init() {
	gen.DeclareNames("redact", func(*gen.Message) gen.Names {
		return gen.Names{Methods: []string{"Redact", "Redacted"}}
	})
}
