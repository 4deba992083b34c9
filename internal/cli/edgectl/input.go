package edgectl

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"go.yaml.in/yaml/v3"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/edgekit/edgekit/fieldmap"
	"github.com/edgekit/edgekit/internal/cli/protoflags"
	"github.com/edgekit/edgekit/internal/reference"
)

// input is what a command line says about one message: the field flags,
// the NAME argument and the -f file.
type input struct {
	md     protoreflect.MessageDescriptor
	schema *fieldmap.Schema
	set    *protoflags.Set
	file   string
	// keyPrefix is the path of the key within md ("key."), "" for a
	// message without one.
	keyPrefix string
}

// schemaOf returns the generated field schema of md, or one built by
// reflection for messages generated without it (requests).
func schemaOf(md protoreflect.MessageDescriptor) *fieldmap.Schema {
	if m, err := newMessage(md); err == nil {
		if s, ok := m.(interface{ FieldSchema() *fieldmap.Schema }); ok {
			return s.FieldSchema()
		}
	}
	return reference.NewSchema(md)
}

// newInput builds the flags of md's leaves that opts selects and registers
// them on fs; a name clashing with a flag of fs or reserved is an error.
func newInput(md protoreflect.MessageDescriptor, fs, reserved *pflag.FlagSet, opts protoflags.Options) (*input, error) {
	in := &input{md: md, schema: schemaOf(md)}
	if fd := md.Fields().ByName("key"); fd != nil && fd.Message() != nil {
		in.keyPrefix = "key."
	}
	set, err := protoflags.New(md, in.schema, opts)
	if err != nil {
		return nil, err
	}
	if err := set.Register(fs, reserved); err != nil {
		return nil, err
	}
	in.set = set
	return in, nil
}

// nameArg applies the NAME argument: a plain name sets key.name; a key
// string ("organization=acme,name=edge1", the form tables and messages
// print) sets each key field it names.
func (in *input) nameArg(cmd *cobra.Command, args []string) error {
	if len(args) == 0 {
		return nil
	}
	if in.keyPrefix == "" {
		return usagef("%s takes no NAME argument", cmd.CommandPath())
	}
	arg := args[0]
	set := func(field, value string) error {
		name := protoflags.FlagName(in.keyPrefix + field)
		if _, ok := in.set.Lookup(name); !ok {
			return fmt.Errorf("%w: %s", fieldmap.ErrKeyUnknownField, field)
		}
		if cmd.Flags().Changed(name) {
			return usagef("the key field %s is given twice: in the argument %q and as --%s", field, arg, name)
		}
		if err := cmd.Flags().Set(name, value); err != nil {
			return usagef("invalid value %q for key field %s: %v", value, field, err)
		}
		return nil
	}
	if !strings.Contains(arg, "=") {
		if _, ok := in.set.Lookup(in.keyPrefix + "name"); !ok {
			return usagef("the key of %s has no name field: give the key as field=value pairs, for example %s", in.md.Name(), keyExample(in))
		}
		return set("name", arg)
	}
	err := fieldmap.ParseKeyFields(string(in.md.FullName()), arg, set)
	if err != nil {
		if _, ok := err.(usageError); ok {
			return err
		}
		return usagef("bad key %q: %v (want field=value pairs such as %s)", arg, err, keyExample(in))
	}
	return nil
}

// keyExample returns a key string naming every key field, for messages.
func keyExample(in *input) string {
	var parts []string
	for _, f := range in.set.Fields() {
		if p, ok := strings.CutPrefix(f.Path, in.keyPrefix); ok && in.keyPrefix != "" {
			parts = append(parts, p+"=...")
		}
	}
	return strings.Join(parts, ",")
}

// readFile reads -f into a new message of md (YAML or JSON, proto or JSON
// field names) and returns it with its JSON form; nil when -f was not
// given.
func (in *input) readFile(stdin io.Reader) (proto.Message, []byte, error) {
	if in.file == "" {
		return nil, nil, nil
	}
	var data []byte
	var err error
	if in.file == "-" {
		data, err = io.ReadAll(stdin)
	} else {
		data, err = os.ReadFile(in.file)
	}
	if err != nil {
		return nil, nil, usageError{err}
	}
	return decodeFile(in.md, in.file, data)
}

// decodeFile decodes YAML or JSON into a message of md. YAML is read as
// YAML 1.2 (go.yaml.in/yaml/v3), so that "no", "on" or "n" stay strings.
func decodeFile(md protoreflect.MessageDescriptor, name string, data []byte) (proto.Message, []byte, error) {
	var doc any
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, nil, usagef("%s: %v", name, err)
	}
	if doc == nil {
		return nil, nil, usagef("%s is empty", name)
	}
	j, err := json.Marshal(doc)
	if err != nil {
		return nil, nil, usagef("%s: %v", name, err)
	}
	m, err := newMessage(md)
	if err != nil {
		return nil, nil, err
	}
	if err := protojson.Unmarshal(j, m); err != nil {
		return nil, nil, usagef("%s: not a %s: %s", name, md.Name(), strings.ReplaceAll(strings.TrimPrefix(err.Error(), "proto:"), "\u00a0", " "))
	}
	return m, j, nil
}

// build returns the message the command line describes: the file's (or an
// empty one), with the field flags applied over it.
func (in *input) build(stdin io.Reader) (proto.Message, []byte, error) {
	m, j, err := in.readFile(stdin)
	if err != nil {
		return nil, nil, err
	}
	if m == nil {
		if m, err = newMessage(in.md); err != nil {
			return nil, nil, err
		}
	}
	if err := in.set.Apply(m.ProtoReflect()); err != nil {
		return nil, nil, usageError{err}
	}
	return m, j, nil
}

// hasKey reports whether any key field of m is set.
func hasKey(m proto.Message) bool {
	fd := field(m, "key")
	return fd != nil && m.ProtoReflect().Has(fd) && proto.Size(m.ProtoReflect().Get(fd).Message().Interface()) > 0
}

// keyString returns the key of m (its "key" field) as a key string, or ""
// when m has none.
func keyString(m proto.Message) string {
	fd := field(m, "key")
	if fd == nil || fd.Message() == nil {
		return ""
	}
	return fieldmap.KeyString(m.ProtoReflect().Get(fd).Message().Interface())
}
