package diff

import "github.com/edgekit/edgekit/gen"

func init() {
	gen.DeclareNames("diff", func(*gen.Message) gen.Names { return gen.Names{Methods: []string{"DiffFields"}} })
}
