// Package grpcserver holds what the hosts' gRPC servers share so that
// every one of them answers bad input the same way:
//
//   - Recover turns a panic in a handler into an Internal status with a
//     log line (the method, the panic value and the stack) instead of
//     ending the process. It is a last line of defence: a recovered panic
//     is still a bug, logged at error level with the message
//     PanicMessage so that tests and operators see it.
//   - Registrar registers services so that a request whose bytes do not
//     decode as the method's message answers InvalidArgument naming the
//     message and the problem, where gRPC itself answers Internal.
//
// A host builds its server with ServerOptions and the interceptors of
// Recover, and registers every service, its own and the standard health
// and reflection services, through Registrar.
package grpcserver

import (
	"context"
	"fmt"
	"log/slog"
	"runtime/debug"
	"sync"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/encoding"
	protoenc "google.golang.org/grpc/encoding/proto"
	"google.golang.org/grpc/mem"
	"google.golang.org/grpc/reflection"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
)

// PanicMessage is the message of the log record of a recovered panic.
const PanicMessage = "recovered a panic in a gRPC handler"

// errPanic is what the caller of a handler that panicked receives: it
// says nothing of the server's internals.
var errPanic = status.Error(codes.Internal, "internal error: the server failed to handle this request (logged)")

// Recover returns interceptors that recover a panic of the rest of the
// chain and of the handler, log it on log at error level (PanicMessage,
// with the method, the value and the stack) and answer Internal. Put them
// early in the chain, after only the interceptors that should observe the
// Internal answer (metrics, call logs), so that they cover the others.
func Recover(log *slog.Logger) (grpc.UnaryServerInterceptor, grpc.StreamServerInterceptor) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	recovered := func(ctx context.Context, method string, v any, err *error) {
		log.LogAttrs(context.WithoutCancel(ctx), slog.LevelError, PanicMessage,
			slog.String("method", method), slog.String("panic", fmt.Sprint(v)), slog.String("stack", string(debug.Stack())))
		*err = errPanic
	}
	unary := func(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (resp any, err error) {
		defer func() {
			if v := recover(); v != nil {
				recovered(ctx, info.FullMethod, v, &err)
				resp = nil
			}
		}()
		return h(ctx, req)
	}
	stream := func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, h grpc.StreamHandler) (err error) {
		defer func() {
			if v := recover(); v != nil {
				recovered(ss.Context(), info.FullMethod, v, &err)
			}
		}()
		return h(srv, ss)
	}
	return unary, stream
}

// StreamWorkers is the number of goroutines a server built with
// ServerOptions keeps to run its handlers. Without them gRPC starts a
// goroutine per request, whose stack grows again, by copying, on every
// request that goes deeper than a new goroutine's stack (a handler's chain
// of interceptors, a store transaction and an etcd call do): a worker keeps
// its grown stack from request to request. A request that finds every
// worker busy (long-lived streams hold theirs) gets a goroutine of its own,
// as without workers.
const StreamWorkers = 32

// ServerOptions are the options a server needs for Registrar's handling
// of undecodable requests: a codec (the standard proto codec) that lets
// the services registered through Registrar answer a decoding failure
// themselves. Without it gRPC answers Internal, before a handler can. They
// also run the handlers on StreamWorkers workers.
func ServerOptions() []grpc.ServerOption {
	return []grpc.ServerOption{
		grpc.ForceServerCodecV2(codec{base: encoding.GetCodecV2(protoenc.Name)}),
		grpc.NumStreamWorkers(StreamWorkers),
	}
}

// Registrar returns a registrar that registers services on s so that a
// request message that does not decode answers InvalidArgument naming the
// message type and the problem (s must be built with ServerOptions). It
// lists the services of s too, so that reflection.Register takes it.
func Registrar(s *grpc.Server) reflection.GRPCServer { return registrar{s} }

type registrar struct{ s *grpc.Server }

func (g registrar) GetServiceInfo() map[string]grpc.ServiceInfo { return g.s.GetServiceInfo() }

func (g registrar) RegisterService(desc *grpc.ServiceDesc, impl any) {
	d := *desc
	d.Methods = make([]grpc.MethodDesc, len(desc.Methods))
	for i, m := range desc.Methods {
		h := m.Handler
		m.Handler = func(srv any, ctx context.Context, dec func(any) error, in grpc.UnaryServerInterceptor) (any, error) {
			return h(srv, ctx, func(v any) error { return decode(v, dec) }, in)
		}
		d.Methods[i] = m
	}
	d.Streams = make([]grpc.StreamDesc, len(desc.Streams))
	for i, s := range desc.Streams {
		h := s.Handler
		s.Handler = func(srv any, ss grpc.ServerStream) error { return h(srv, decodingStream{ss}) }
		d.Streams[i] = s
	}
	g.s.RegisterService(&d, impl)
}

// decodingStream receives its messages with decode.
type decodingStream struct{ grpc.ServerStream }

func (s decodingStream) RecvMsg(m any) error { return decode(m, s.ServerStream.RecvMsg) }

// pending holds the messages being received by decode, each with the slot
// where the codec puts the error of decoding it.
var pending sync.Map // message (a pointer) -> *decodeError

type decodeError struct{ err error }

// decode receives m with recv. When the bytes do not decode, the codec
// (which gRPC calls within recv, on this goroutine) leaves the error in
// m's slot and reports success to gRPC, which would otherwise answer
// Internal on its own; decode answers InvalidArgument.
func decode(m any, recv func(any) error) error {
	slot := &decodeError{}
	pending.Store(m, slot)
	defer pending.Delete(m)
	if err := recv(m); err != nil {
		return err
	}
	if slot.err != nil {
		name := fmt.Sprintf("%T", m)
		if pm, ok := m.(proto.Message); ok {
			name = string(pm.ProtoReflect().Descriptor().FullName())
		}
		return status.Errorf(codes.InvalidArgument, "the request does not decode as a %s: %v", name, slot.err)
	}
	return nil
}

// codec is the proto codec, except that a message that decode receives
// gets its decoding error through its slot.
type codec struct{ base encoding.CodecV2 }

func (c codec) Marshal(v any) (mem.BufferSlice, error) { return c.base.Marshal(v) }

func (c codec) Unmarshal(data mem.BufferSlice, v any) error {
	err := c.base.Unmarshal(data, v)
	if err != nil {
		if slot, ok := pending.Load(v); ok {
			slot.(*decodeError).err = err
			return nil
		}
	}
	return err
}

func (c codec) Name() string { return c.base.Name() }
