package protoflags

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"

	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/edgekit/edgekit/fieldmap"
)

// FieldsInJSON returns the field flags of the fields a JSON object of message
// md names (proto or JSON field names), as the leaves of schema: a key whose
// field is a message with flags below it and whose value is an object is
// walked into; any other key (a scalar, list, map, a message copied whole,
// null, or an empty object) names its own flag. So an update built from a file changes
// exactly the fields the file mentions, including those it sets to zero.
// An unknown key is an error naming its path.
func FieldsInJSON(md protoreflect.MessageDescriptor, schema *fieldmap.Schema, data []byte) ([]string, error) {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(data, &obj); err != nil {
		return nil, fmt.Errorf("want a JSON object of %s: %w", md.FullName(), err)
	}
	var out []string
	if err := walkJSON(md, schema, obj, "", "", &out); err != nil {
		return nil, err
	}
	return out, nil
}

func walkJSON(md protoreflect.MessageDescriptor, schema *fieldmap.Schema, obj map[string]json.RawMessage, flagPrefix, pathPrefix string, out *[]string) error {
	fields := md.Fields()
	for _, name := range sortedKeys(obj) {
		fd := fields.ByName(protoreflect.Name(name))
		if fd == nil {
			fd = fields.ByJSONName(name)
		}
		if fd == nil {
			return fmt.Errorf("%s has no field %s%s", md.FullName(), pathPrefix, name)
		}
		flag := flagPrefix + strconv.Itoa(int(fd.Number()))
		path := pathPrefix + string(fd.Name())
		sf, ok := schema.Lookup(flag)
		if !ok {
			return fmt.Errorf("%s: field %s has no flag", schema.Message(), path)
		}
		var sub map[string]json.RawMessage
		if sf.Kind == fieldmap.KindMessage && json.Unmarshal(obj[name], &sub) == nil && len(sub) > 0 {
			if err := walkJSON(fd.Message(), schema, sub, flag+".", path+".", out); err != nil {
				return err
			}
			continue
		}
		*out = append(*out, flag)
	}
	return nil
}

func sortedKeys(m map[string]json.RawMessage) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
