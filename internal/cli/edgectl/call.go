package edgectl

import (
	"context"
	"errors"
	"fmt"
	"io"

	"google.golang.org/grpc"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
)

// callError is a failed call: what edgectl was doing and the call's error,
// rendered as "op: Code: message" for a gRPC status.
type callError struct {
	op  string
	err error
}

func (e *callError) Error() string {
	if s, ok := status.FromError(e.err); ok {
		return fmt.Sprintf("%s: %s: %s", e.op, s.Code(), s.Message())
	}
	return e.op + ": " + e.err.Error()
}

func (e *callError) Unwrap() error { return e.err }

// fullMethod returns the gRPC name of a method: "/pkg.Service/Method".
func fullMethod(md protoreflect.MethodDescriptor) string {
	return "/" + string(md.Parent().FullName()) + "/" + string(md.Name())
}

// newMessage returns a new message of the registered Go type of md.
func newMessage(md protoreflect.MessageDescriptor) (proto.Message, error) {
	mt, err := protoregistry.GlobalTypes.FindMessageByName(md.FullName())
	if err != nil {
		return nil, fmt.Errorf("message %s: %w", md.FullName(), err)
	}
	return mt.New().Interface(), nil
}

// callUnary calls a unary method and returns its response.
func callUnary(ctx context.Context, conn grpc.ClientConnInterface, md protoreflect.MethodDescriptor, req proto.Message) (proto.Message, error) {
	resp, err := newMessage(md.Output())
	if err != nil {
		return nil, err
	}
	if err := conn.Invoke(ctx, fullMethod(md), req, resp); err != nil {
		return nil, err
	}
	return resp, nil
}

// callStream calls a server-streaming method and hands each response to
// each, until the stream ends (nil), fails (the call's error) or each
// fails (its error; the call is cancelled).
func callStream(ctx context.Context, conn grpc.ClientConnInterface, md protoreflect.MethodDescriptor, req proto.Message, each func(proto.Message) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	s, err := conn.NewStream(ctx, &grpc.StreamDesc{ServerStreams: true}, fullMethod(md))
	if err != nil {
		return err
	}
	if err := s.SendMsg(req); err != nil {
		return err
	}
	if err := s.CloseSend(); err != nil {
		return err
	}
	for {
		resp, err := newMessage(md.Output())
		if err != nil {
			return err
		}
		err = s.RecvMsg(resp)
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		if err := each(resp); err != nil {
			return err
		}
	}
}

// field returns the descriptor of a request or response field by name, or
// nil.
func field(m proto.Message, name protoreflect.Name) protoreflect.FieldDescriptor {
	return m.ProtoReflect().Descriptor().Fields().ByName(name)
}

// setField sets a field of m by name; it reports an error when m has no
// such field (a request message not shaped as edgectl expects).
func setField(m proto.Message, name protoreflect.Name, v protoreflect.Value) error {
	fd := field(m, name)
	if fd == nil {
		return fmt.Errorf("%s has no field %s", m.ProtoReflect().Descriptor().FullName(), name)
	}
	m.ProtoReflect().Set(fd, v)
	return nil
}

// objectField returns the field of m whose type is the message object, or
// nil.
func objectField(m proto.Message, object protoreflect.FullName) protoreflect.FieldDescriptor {
	fields := m.ProtoReflect().Descriptor().Fields()
	for i := range fields.Len() {
		fd := fields.Get(i)
		if fd.Message() != nil && fd.Message().FullName() == object && !fd.IsList() && !fd.IsMap() {
			return fd
		}
	}
	return nil
}
