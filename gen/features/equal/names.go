package equal

import "github.com/edgekit/edgekit/gen"

func init() {
	gen.DeclareNames("equal", func(*gen.Message) gen.Names { return gen.Names{Methods: []string{"Equal"}} })
}
