// Package equal is the "equal" feature of protoc-gen-go-edgekit (not yet implemented: generates nothing).
package equal

import (
	"google.golang.org/protobuf/compiler/protogen"

	"github.com/edgekit/edgekit/gen"
)

func init() {
	gen.Register("equal", func(g *gen.GeneratedFile) gen.Feature { return &feature{g} })
}

type feature struct{ g *gen.GeneratedFile }

var _ gen.Feature = (*feature)(nil)

func (f *feature) GenerateFile(file *protogen.File) bool { return false }
