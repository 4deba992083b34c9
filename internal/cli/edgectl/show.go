package edgectl

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/internal/cli/output"
	"github.com/edgekit/edgekit/internal/cli/protoflags"
)

// showCommand is "show KIND".
func (a *app) showCommand() *cobra.Command {
	return a.verbCommand("show", "Show objects", func(k *Kind) *cobra.Command {
		cmd := a.kindCommand(k, "Show "+k.Name+" objects")
		if k.Singleton {
			cmd.RunE = func(cmd *cobra.Command, _ []string) error { return a.runShowSingleton(cmd, k) }
			return cmd
		}
		cmd.Long = "Show the " + k.Name + " objects that match the field flags (every field given must be equal)." + nameHelp(k)
		var watch bool
		if k.Watch != nil {
			cmd.Flags().BoolVarP(&watch, "watch", "w", false, "after the matching objects, show every change until interrupted")
		}
		in, err := a.newInput(cmd, k.Desc(), protoflags.Options{})
		cmd.RunE = func(cmd *cobra.Command, args []string) error {
			if err != nil {
				return err
			}
			if watch {
				return a.runWatch(cmd, k, in, args)
			}
			return a.runShow(cmd, k, in, args)
		}
		return cmd
	})
}

// watchCommand is "watch KIND", for the kinds that have a Watch method.
func (a *app) watchCommand() *cobra.Command {
	return a.verbCommand("watch", "Show matching objects, then every change until interrupted", func(k *Kind) *cobra.Command {
		if k.Watch == nil {
			return nil
		}
		cmd := a.kindCommand(k, "Watch "+k.Name+" objects")
		cmd.Long = "Show the " + k.Name + " objects that match the field flags, then every change until interrupted." + nameHelp(k)
		in, err := a.newInput(cmd, k.Desc(), protoflags.Options{})
		cmd.RunE = func(cmd *cobra.Command, args []string) error {
			if err != nil {
				return err
			}
			return a.runWatch(cmd, k, in, args)
		}
		return cmd
	})
}

// filterRequest returns the request of a Show or Watch method with the
// filter the command line describes.
func (a *app) filterRequest(cmd *cobra.Command, k *Kind, in *input, args []string, md protoreflect.MethodDescriptor) (proto.Message, error) {
	if err := in.nameArg(cmd, args); err != nil {
		return nil, err
	}
	filter, _, err := in.build(cmd.InOrStdin())
	if err != nil {
		return nil, err
	}
	req, err := newMessage(md.Input())
	if err != nil {
		return nil, err
	}
	if err := setField(req, "filter", protoreflect.ValueOfMessage(filter.ProtoReflect())); err != nil {
		return nil, err
	}
	return req, nil
}

// filterCall is a Show or Watch call ready to go.
type filterCall struct {
	req    proto.Message
	conn   grpc.ClientConnInterface
	ctx    context.Context
	cancel context.CancelFunc
}

// filterCall builds the request of md from the command line and connects.
func (a *app) filterCall(cmd *cobra.Command, k *Kind, in *input, args []string, md protoreflect.MethodDescriptor) (*filterCall, error) {
	req, err := a.filterRequest(cmd, k, in, args, md)
	if err != nil {
		return nil, err
	}
	conn, ctx, cancel, err := a.connect(cmd)
	if err != nil {
		return nil, err
	}
	return &filterCall{req: req, conn: conn, ctx: ctx, cancel: cancel}, nil
}

// showPageRows is how many rows of a table show prints at a time: each
// page is lined up on its own as soon as it is full, so that a long answer
// prints while it arrives (JSON and YAML print every object as it comes).
const showPageRows = 100

// runShow prints the objects that match, as they arrive.
func (a *app) runShow(cmd *cobra.Command, k *Kind, in *input, args []string) error {
	call, err := a.filterCall(cmd, k, in, args, k.Show)
	if err != nil {
		return err
	}
	defer call.cancel()
	out := cmd.OutOrStdout()
	var (
		add   func(protoreflect.Message) error
		flush func() error
		count int
	)
	if f := a.format(); f != output.Table {
		l, err := output.NewListWriter(out, f)
		if err != nil {
			return err
		}
		add = func(m protoreflect.Message) error { return l.Add(m.Interface()) }
		flush = l.Close
	} else {
		t := output.NewPagedTable(out, k.Columns, showPageRows)
		add, flush = t.Row, t.Flush
	}
	err = callStream(call.ctx, call.conn, k.Show, call.req, func(resp proto.Message) error {
		fd := objectField(resp, fullName(k))
		if fd == nil {
			return fmt.Errorf("%s has no %s field", resp.ProtoReflect().Descriptor().FullName(), k.Desc().Name())
		}
		count++
		return add(resp.ProtoReflect().Get(fd).Message())
	})
	if err != nil {
		return &callError{op: "show " + k.Name, err: err}
	}
	if count == 0 && len(args) > 0 {
		return status.Errorf(codes.NotFound, "no %s matches %s", k.Name, args[0])
	}
	if count == 0 && a.format() == output.Table {
		fmt.Fprintf(cmd.ErrOrStderr(), "No %s objects found.\n", k.Name)
		return nil
	}
	return flush()
}

// eventWidth is the width of the EVENT column of a watch: PUT, DELETE.
const eventWidth = len("DELETE")

// runWatch prints the matching objects, then every change, until the
// context ends (Ctrl-C or --timeout: success) or the stream fails.
func (a *app) runWatch(cmd *cobra.Command, k *Kind, in *input, args []string) error {
	call, err := a.filterCall(cmd, k, in, args, k.Watch)
	if err != nil {
		return err
	}
	defer call.cancel()
	out := cmd.OutOrStdout()
	f := a.format()
	table := output.NewStreamTable(out, []output.Column{{Header: "EVENT", Width: eventWidth}}, k.Columns)
	err = callStream(call.ctx, call.conn, k.Watch, call.req, func(resp proto.Message) error {
		if f != output.Table {
			return output.WriteEvent(out, f, resp)
		}
		typ := edgeproto.EventType_EVENT_TYPE_UNSPECIFIED
		if fd := field(resp, "type"); fd != nil {
			typ = edgeproto.EventType(resp.ProtoReflect().Get(fd).Enum())
		}
		if typ == edgeproto.EventType_EVENT_TYPE_SYNCED {
			return nil
		}
		fd := objectField(resp, fullName(k))
		if fd == nil {
			return fmt.Errorf("%s has no %s field", resp.ProtoReflect().Descriptor().FullName(), k.Desc().Name())
		}
		event := protoflags.EnumString(typ.Descriptor(), protoreflect.EnumNumber(typ))
		return table.Row([]string{event}, resp.ProtoReflect().Get(fd).Message())
	})
	if err != nil && cmd.Context() != nil && cmd.Context().Err() != nil {
		return nil // interrupted: the normal end of a watch
	}
	if err != nil && a.timeout > 0 && status.Code(err) == codes.DeadlineExceeded {
		return nil // --timeout: watch for that long
	}
	if err != nil {
		return &callError{op: "watch " + k.Name, err: err}
	}
	return nil
}

// runShowSingleton prints the settings.
func (a *app) runShowSingleton(cmd *cobra.Command, k *Kind) error {
	req, err := newMessage(k.Show.Input())
	if err != nil {
		return err
	}
	return a.singletonCall(cmd, k, k.Show, req)
}

// singletonCall calls a unary method of a singleton kind and prints the
// object in its response.
func (a *app) singletonCall(cmd *cobra.Command, k *Kind, md protoreflect.MethodDescriptor, req proto.Message) error {
	resp, err := a.unary(cmd, md, req, strings.ToLower(verbOf(string(md.Name())))+" "+k.Name)
	if err != nil {
		return err
	}
	fd := objectField(resp, fullName(k))
	if fd == nil {
		return errors.New("the response holds no " + k.Name)
	}
	return a.printObject(cmd, k, resp.ProtoReflect().Get(fd).Message())
}

// printObject prints one object: as JSON or YAML, or as a FIELD VALUE
// table of every leaf of its schema.
func (a *app) printObject(cmd *cobra.Command, k *Kind, m protoreflect.Message) error {
	out := cmd.OutOrStdout()
	if f := a.format(); f != output.Table {
		return output.WriteOne(out, f, m.Interface())
	}
	tw := output.NewTabWriter(out)
	fmt.Fprintln(tw, "FIELD\tVALUE")
	schema := schemaOf(k.Desc())
	for _, flag := range schema.Leaves() {
		sf, _ := schema.Lookup(flag)
		fmt.Fprintf(tw, "%s\t%s\n", sf.Path, output.FormatPath(m, sf.Path))
	}
	return tw.Flush()
}

// resetCommand is "reset KIND", for the kinds that have a Reset method.
func (a *app) resetCommand() *cobra.Command {
	return a.verbCommand("reset", "Set every field of an object back to its default", func(k *Kind) *cobra.Command {
		if k.Reset == nil {
			return nil
		}
		cmd := a.kindCommand(k, "Set every field of "+k.Name+" back to its default")
		cmd.RunE = func(cmd *cobra.Command, _ []string) error {
			req, err := newMessage(k.Reset.Input())
			if err != nil {
				return err
			}
			return a.singletonCall(cmd, k, k.Reset, req)
		}
		return cmd
	})
}

// kindsCommand lists the kinds, their aliases and verbs.
func (a *app) kindsCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "kinds",
		Short: "List the kinds of objects, their short names and what edgectl can do with them",
		Args:  a.noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			tw := output.NewTabWriter(cmd.OutOrStdout())
			fmt.Fprintln(tw, "KIND\tALIASES\tVERBS\tMESSAGE")
			for _, k := range a.kinds {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", k.Name, strings.Join(k.Aliases, ","), strings.Join(verbs(k), ","), k.Desc().FullName())
			}
			return tw.Flush()
		},
	}
}

// verbs lists what edgectl can do with a kind.
func verbs(k *Kind) []string {
	var out []string
	for _, v := range []struct {
		name string
		md   protoreflect.MethodDescriptor
	}{{"create", k.Create}, {"update", k.Update}, {"delete", k.Delete}, {"show", k.Show}, {"watch", k.Watch}, {"reset", k.Reset}} {
		if v.md != nil {
			out = append(out, v.name)
		}
	}
	var actions []string
	for name := range k.Actions {
		actions = append(actions, name)
	}
	slices.Sort(actions)
	return append(out, actions...)
}
