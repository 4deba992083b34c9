package clone

import "github.com/edgekit/edgekit/gen"

func init() {
	gen.DeclareNames("clone", func(*gen.Message) gen.Names { return gen.Names{Methods: []string{"Clone"}} })
}
