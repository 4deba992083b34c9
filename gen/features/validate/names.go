package validate

import "github.com/edgekit/edgekit/gen"

func init() {
	gen.DeclareNames("validate", func(*gen.Message) gen.Names {
		return gen.Names{Methods: []string{"ValidateEnums", "ValidateFields"}}
	})
}
