package edgectl

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/edgekit/edgekit/fieldmap"
	"github.com/edgekit/edgekit/internal/apifields"
	"github.com/edgekit/edgekit/internal/cli/output"
	"github.com/edgekit/edgekit/internal/cli/protoflags"
)

// runCreate creates the object the command line describes.
func (a *app) runCreate(cmd *cobra.Command, k *Kind, in *input, args []string, noWait bool) error {
	if err := in.nameArg(cmd, args); err != nil {
		return err
	}
	obj, _, err := in.build(cmd.InOrStdin())
	if err != nil {
		return err
	}
	if !k.Singleton && !hasKey(obj) {
		return usagef("which %s? give a NAME or the --key.* flags", k.Name)
	}
	if err := apifields.CheckCreate(obj); err != nil {
		return usageError{err}
	}
	req, err := newMessage(k.Create.Input())
	if err != nil {
		return err
	}
	if err := a.setObject(req, k, obj); err != nil {
		return err
	}
	return a.mutate(cmd, k, "create", keyString(obj), k.Create, req, noWait)
}

// setObject sets the field of req that holds the kind's object.
func (a *app) setObject(req proto.Message, k *Kind, obj proto.Message) error {
	fd := objectField(req, fullName(k))
	if fd == nil {
		return fmt.Errorf("%s has no %s field", req.ProtoReflect().Descriptor().FullName(), k.Desc().Name())
	}
	req.ProtoReflect().Set(fd, protoreflect.ValueOfMessage(obj.ProtoReflect()))
	return nil
}

// runUpdate changes the fields the command line names.
func (a *app) runUpdate(cmd *cobra.Command, k *Kind, in *input, args, clear []string, noWait bool) error {
	if err := in.nameArg(cmd, args); err != nil {
		return err
	}
	obj, fileJSON, err := in.build(cmd.InOrStdin())
	if err != nil {
		return err
	}
	if !k.Singleton && !hasKey(obj) {
		return usagef("which %s? give a NAME or the --key.* flags", k.Name)
	}
	fields, err := updateFields(k, in, fileJSON, clear, obj)
	if err != nil {
		return usageError{err}
	}
	req, err := newMessage(k.Update.Input())
	if err != nil {
		return err
	}
	if err := a.setObject(req, k, obj); err != nil {
		return err
	}
	list := req.ProtoReflect().NewField(field(req, "fields")).List()
	for _, f := range fields {
		list.Append(protoreflect.ValueOfString(f))
	}
	if err := setField(req, "fields", protoreflect.ValueOfList(list)); err != nil {
		return err
	}
	return a.mutate(cmd, k, "update", keyString(obj), k.Update, req, noWait)
}

// updateFields returns the fields of an update request: the flags of the
// fields the file names, of the field flags given (with their list
// actions) and of --clear, without the key (which names the object). A
// field users may not change, a list action the kind does not allow, an
// unknown --clear field or an update of nothing is an error naming it.
func updateFields(k *Kind, in *input, fileJSON []byte, clear []string, obj proto.Message) ([]string, error) {
	var fields []string
	if fileJSON != nil {
		ff, err := protoflags.FieldsInJSON(in.md, in.schema, fileJSON)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", in.file, err)
		}
		fields = append(fields, ff...)
	}
	changes, err := in.set.Changes()
	if err != nil {
		return nil, err
	}
	for _, c := range changes {
		fields = append(fields, c.FieldFlag())
	}
	for _, name := range clear {
		flag, err := in.schema.FlagOf(strings.ReplaceAll(name, "-", "_"))
		if err != nil {
			return nil, fmt.Errorf("--clear %s: %s has no such field", name, k.Name)
		}
		for _, f := range fields {
			bare, _, _ := strings.Cut(f, ":")
			if bare == flag || isUnder(bare, flag) || isUnder(flag, bare) {
				sf, _ := in.schema.Lookup(bare)
				return nil, fmt.Errorf("--clear %s: field %s is also given a value", name, sf.Path)
			}
		}
		if err := clearPath(obj.ProtoReflect(), in.md, name); err != nil {
			return nil, err
		}
		fields = append(fields, flag)
	}
	// The key names the object; it is not a change.
	fields = slices.DeleteFunc(fields, func(f string) bool {
		return apifields.Of(fullName(k), f) == apifields.Key
	})
	slices.SortFunc(fields, func(a, b string) int {
		a, _, _ = strings.Cut(a, ":")
		b, _, _ = strings.Cut(b, ":")
		return fieldmap.CompareFlags(a, b)
	})
	fields = slices.Compact(fields)
	if len(fields) == 0 {
		return nil, errors.New("nothing to update: give field flags, --clear or -f")
	}
	fm, err := in.schema.Parse(fields...)
	if err != nil {
		return nil, err
	}
	if err := apifields.CheckUpdate(fm); err != nil {
		return nil, err
	}
	return fields, nil
}

// isUnder reports whether flag is a strict descendant of parent.
func isUnder(flag, parent string) bool {
	return strings.HasPrefix(flag, parent+".")
}

// clearPath clears the field at a path (flag-style or proto names) of m.
func clearPath(m protoreflect.Message, md protoreflect.MessageDescriptor, name string) error {
	parts := strings.Split(strings.ReplaceAll(name, "-", "_"), ".")
	for i, p := range parts {
		fd := m.Descriptor().Fields().ByName(protoreflect.Name(p))
		if fd == nil {
			return fmt.Errorf("--clear %s: %s has no such field", name, md.Name())
		}
		if i == len(parts)-1 {
			m.Clear(fd)
			return nil
		}
		if !m.Has(fd) {
			return nil
		}
		m = m.Mutable(fd).Message()
	}
	return nil
}

// runDelete deletes the object the command line names.
func (a *app) runDelete(cmd *cobra.Command, k *Kind, in *input, args []string, file string, noWait bool) error {
	if err := in.nameArg(cmd, args); err != nil {
		return err
	}
	req, _, err := in.build(cmd.InOrStdin())
	if err != nil {
		return err
	}
	if file != "" {
		obj, _, err := (&input{md: k.Desc(), file: file}).readFile(cmd.InOrStdin())
		if err != nil {
			return err
		}
		fileKey := field(obj, "key")
		if fileKey == nil || !obj.ProtoReflect().Has(fileKey) {
			return usagef("%s has no key", file)
		}
		if hasKey(req) {
			return usagef("give the key once: in the file, the NAME argument or the --key.* flags")
		}
		if err := setField(req, "key", obj.ProtoReflect().Get(fileKey)); err != nil {
			return err
		}
	}
	if !hasKey(req) {
		return usagef("which %s? give a NAME, the --key.* flags or -f", k.Name)
	}
	return a.mutate(cmd, k, "delete", keyString(req), k.Delete, req, noWait)
}

// runAction calls an action on the object the command line names.
func (a *app) runAction(cmd *cobra.Command, k *Kind, name string, md protoreflect.MethodDescriptor, in *input, args []string, noWait bool) error {
	if err := in.nameArg(cmd, args); err != nil {
		return err
	}
	req, _, err := in.build(cmd.InOrStdin())
	if err != nil {
		return err
	}
	if !hasKey(req) {
		return usagef("which %s? give a NAME or the --key.* flags", k.Name)
	}
	what := k.Name + " " + keyString(req)
	if md.IsStreamingServer() {
		return a.mutate(cmd, k, name, keyString(req), md, req, noWait)
	}
	resp, err := a.unary(cmd, md, req, name+" "+what)
	if err != nil {
		return err
	}
	out := cmd.OutOrStdout()
	if f := a.format(); f != output.Table {
		return output.WriteOne(out, f, resp)
	}
	fmt.Fprintf(out, "%s: %s done\n", what, name)
	for _, line := range extraFields(resp, what) {
		fmt.Fprintln(out, line)
	}
	return nil
}

// mutate sends a create, update, delete (or a streaming action) and
// reports its outcome: the progress of a streaming call, or the stored
// object of a unary one.
func (a *app) mutate(cmd *cobra.Command, k *Kind, verb, key string, md protoreflect.MethodDescriptor, req proto.Message, noWait bool) error {
	if fd := field(req, "no_wait"); fd != nil {
		req.ProtoReflect().Set(fd, protoreflect.ValueOfBool(noWait))
	}
	what := k.Name
	if key != "" {
		what += " " + key
	}
	if md.IsStreamingServer() {
		conn, ctx, cancel, err := a.connect(cmd)
		if err != nil {
			return err
		}
		defer cancel()
		return a.followProgress(ctx, conn, k, verb, what, md, req)
	}
	resp, err := a.unary(cmd, md, req, verb+" "+what)
	if err != nil {
		return err
	}
	obj := resp.ProtoReflect()
	if fd := objectField(resp, fullName(k)); fd != nil {
		obj = resp.ProtoReflect().Get(fd).Message()
	}
	if f := a.format(); f != output.Table {
		return output.WriteOne(cmd.OutOrStdout(), f, obj.Interface())
	}
	fmt.Fprintf(cmd.OutOrStdout(), "%s %s\n", what, pastTense(verb))
	return nil
}

func pastTense(verb string) string {
	if strings.Contains(verb, "-") { // an action: refresh-insts
		return verb + " done"
	}
	if strings.HasSuffix(verb, "e") {
		return verb + "d"
	}
	return verb + "ed"
}
