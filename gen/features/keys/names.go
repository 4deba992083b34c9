package keys

import "github.com/edgekit/edgekit/gen"

func init() { gen.DeclareNames("keys", names) }

// names declares, for a message with a key, GetKeyString, GetKey (unless
// the key field's own getter is GetKey) and Parse<Msg>KeyString.
func names(mm *gen.Message) gen.Names {
	if mm.Key == nil {
		return gen.Names{}
	}
	n := gen.Names{
		Methods: []string{"GetKeyString"},
		Package: []gen.PackageName{{Name: parseFunc(mm), Desc: mm.Key.Desc}},
	}
	if mm.Key.GoName != "Key" {
		n.Methods = append(n.Methods, "GetKey")
	}
	return n
}

// parseFunc is the name of the key string parser of mm.
func parseFunc(mm *gen.Message) string { return "Parse" + mm.GoIdent.GoName + "KeyString" }
