package fields

import (
	"fmt"

	"github.com/edgekit/edgekit/gen"
)

func init() { gen.DeclareNames("fields", names) }

// names declares FieldSchema, <Msg>AllFields, New<Msg>FieldMap and a flag
// constant per flag, located at the field of the message the flag's path
// starts from.
func names(mm *gen.Message) gen.Names {
	name := mm.GoIdent.GoName
	full := mm.Desc.FullName()
	n := gen.Names{
		Methods: []string{"FieldSchema"},
		Package: []gen.PackageName{
			{Name: name + "AllFields", Desc: mm.Desc, What: fmt.Sprintf("%sAllFields, the leaf flags of %s", name, full)},
			{Name: "New" + name + "FieldMap", Desc: mm.Desc, What: fmt.Sprintf("New%sFieldMap, the FieldMap constructor of %s", name, full)},
		},
	}
	for _, fl := range mm.Flags {
		n.Package = append(n.Package, gen.PackageName{
			Name: fl.Const,
			Desc: fl.Root().Field.Desc,
			What: fmt.Sprintf("flag constant %s of %s (flag %s, path %s)", fl.Const, full, fl.Flag, fl.Path),
		})
	}
	return n
}
