package copyin

import "github.com/edgekit/edgekit/gen"

func init() {
	gen.DeclareNames("copyin", func(*gen.Message) gen.Names { return gen.Names{Methods: []string{"CopyInFields"}} })
}
