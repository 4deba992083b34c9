// Package grpcsweep calls every method of a running gRPC server with bad
// input, under every role a test gives it, and fails the test when an
// answer shows a bug: a recovered panic, an Internal or Unknown code, a
// transport failure, a request that does not decode answered otherwise
// than InvalidArgument (or an earlier refusal of the caller), a unary
// call that does not answer, or a server that no longer serves after a
// method was called.
//
// The methods come from the services' descriptors (the names a test finds
// with grpc.Server.GetServiceInfo or the reflection service, resolved in
// protoregistry.GlobalFiles), so a method added to a service is swept
// without a change to the test. Each method gets, under each role, three
// requests: the empty message, random bytes (seeded, so a failure
// replays; they may happen to decode) and bytes that cannot decode (a
// field number 0). The calls of one method run concurrently; a streaming
// call is ended after Options.StreamWait (a watch that waits for changes
// answers DeadlineExceeded then, which is accepted for streaming methods
// only).
package grpcsweep

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/mem"
	reflectionpb "google.golang.org/grpc/reflection/grpc_reflection_v1"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"

	"github.com/edgekit/edgekit/internal/grpcserver"
)

// Role is a caller: a name for messages and a connection that carries
// the role's credentials.
type Role struct {
	Name string
	Conn *grpc.ClientConn
}

// Options say what to sweep.
type Options struct {
	// Services are the full names of the services to sweep. Required.
	Services []string
	// Roles are the callers. Required.
	Roles []Role
	// Alive checks that the server still serves; it runs after the calls
	// of each method. Required.
	Alive func(ctx context.Context) error
	// Panics, when set, is the log of the server: a recovered panic
	// logged there fails the sweep, naming the method.
	Panics *PanicLog
	// Seed seeds the random requests; 0 uses 1.
	Seed uint64
	// StreamWait is how long a streaming call may stay open; default 1s.
	StreamWait time.Duration
	// CallTimeout bounds a unary call and Alive; default 30s.
	CallTimeout time.Duration
	// Allow, when set, accepts an answer the rules refuse (return true),
	// for a documented exception.
	Allow func(c Call) bool
}

// Call is one call and its answer.
type Call struct {
	Method    string // full method name, "/pkg.Service/Method"
	Streaming bool
	Role      string
	Input     string // "empty", "random" or "garbage"
	Decodes   bool   // whether the request decodes as the method's message
	Code      codes.Code
	Message   string
}

func (c Call) String() string {
	return fmt.Sprintf("%s as %s with %s request: %s %q", c.Method, c.Role, c.Input, c.Code, c.Message)
}

// method is a method to sweep.
type method struct {
	name      string
	streaming bool
	input     protoreflect.MessageType
}

// Methods resolves the methods of services in protoregistry.GlobalFiles.
func methods(services []string) ([]method, error) {
	var out []method
	for _, s := range services {
		d, err := protoregistry.GlobalFiles.FindDescriptorByName(protoreflect.FullName(s))
		if err != nil {
			return nil, fmt.Errorf("service %s: %w (is its generated package linked into the test?)", s, err)
		}
		sd, ok := d.(protoreflect.ServiceDescriptor)
		if !ok {
			return nil, fmt.Errorf("%s is a %T, not a service", s, d)
		}
		for i := range sd.Methods().Len() {
			md := sd.Methods().Get(i)
			mt, err := protoregistry.GlobalTypes.FindMessageByName(md.Input().FullName())
			if err != nil {
				return nil, fmt.Errorf("method %s: input %s: %w", md.FullName(), md.Input().FullName(), err)
			}
			out = append(out, method{
				name:      fmt.Sprintf("/%s/%s", sd.FullName(), md.Name()),
				streaming: md.IsStreamingClient() || md.IsStreamingServer(),
				input:     mt,
			})
		}
	}
	return out, nil
}

// Sweep calls every method of o.Services under every role and fails t
// (with Errorf, one line per bad answer, and Fatalf when the server no
// longer serves) on the answers the package comment lists. It returns the
// calls made.
func Sweep(t testing.TB, o Options) []Call {
	t.Helper()
	return sweep(o, func(fatal bool, format string, args ...any) {
		t.Helper()
		if fatal {
			t.Fatalf(format, args...)
		}
		t.Errorf(format, args...)
	})
}

// sweep is Sweep reporting its findings to report; it returns after a
// fatal one.
func sweep(o Options, report func(fatal bool, format string, args ...any)) []Call {
	if len(o.Services) == 0 || len(o.Roles) == 0 || o.Alive == nil {
		report(true, "grpcsweep: Options.Services, Roles and Alive are required")
		return nil
	}
	ms, err := methods(o.Services)
	if err != nil {
		report(true, "grpcsweep: %v", err)
		return nil
	}
	if o.Seed == 0 {
		o.Seed = 1
	}
	if o.StreamWait <= 0 {
		o.StreamWait = time.Second
	}
	if o.CallTimeout <= 0 {
		o.CallTimeout = 30 * time.Second
	}
	rnd := rand.New(rand.NewPCG(o.Seed, o.Seed))
	var all []Call
	for _, m := range ms {
		var calls []Call
		var reqs [][]byte
		for _, r := range o.Roles {
			for _, in := range []string{"empty", "random", "garbage"} {
				b := request(rnd, in)
				calls = append(calls, Call{Method: m.name, Streaming: m.streaming, Role: r.Name, Input: in,
					Decodes: proto.Unmarshal(b, m.input.New().Interface()) == nil})
				reqs = append(reqs, b)
			}
		}
		var wg sync.WaitGroup
		for i := range calls {
			conn := o.Roles[i/3].Conn
			wg.Go(func() {
				calls[i].Code, calls[i].Message = invoke(conn, m, reqs[i], o)
			})
		}
		wg.Wait()
		all = append(all, calls...)
		for _, c := range calls {
			if err := check(c); err != nil && (o.Allow == nil || !o.Allow(c)) {
				report(false, "%v: %v", c, err)
			}
		}
		if o.Panics != nil {
			for _, p := range o.Panics.Take() {
				report(false, "the handler panicked (recovered by the server): %s", p)
			}
		}
		ctx, cancel := context.WithTimeout(context.Background(), o.CallTimeout)
		err := o.Alive(ctx)
		cancel()
		if err != nil {
			report(true, "the server no longer serves after calls of %s: %v", m.name, err)
			return all
		}
	}
	return all
}

// request returns the bytes of one kind of request.
func request(rnd *rand.Rand, kind string) []byte {
	switch kind {
	case "random":
		b := make([]byte, 1+rnd.IntN(48))
		for i := range b {
			b[i] = byte(rnd.Uint32())
		}
		return b
	case "garbage":
		// A tag of field number 0 is invalid in every message.
		b := []byte{0x00}
		for range 1 + rnd.IntN(16) {
			b = append(b, byte(rnd.Uint32()))
		}
		return b
	}
	return nil
}

// invoke makes one call with the request bytes as they are and returns
// its status.
func invoke(conn *grpc.ClientConn, m method, req []byte, o Options) (codes.Code, string) {
	wait := o.CallTimeout
	if m.streaming {
		wait = o.StreamWait
	}
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	desc := &grpc.StreamDesc{ServerStreams: true, ClientStreams: true}
	cs, err := conn.NewStream(ctx, desc, m.name, grpc.ForceCodecV2(RawCodec{}))
	if err != nil {
		return status.Code(err), err.Error()
	}
	if err := cs.SendMsg(&req); err != nil && !errors.Is(err, io.EOF) {
		return status.Code(err), err.Error()
	}
	if err := cs.CloseSend(); err != nil {
		return status.Code(err), err.Error()
	}
	// Bounded: a stream that answers more than this many messages within
	// StreamWait is ended by the deadline.
	for range 100_000 {
		var resp []byte
		err := cs.RecvMsg(&resp)
		if errors.Is(err, io.EOF) {
			return codes.OK, ""
		}
		if err != nil {
			st := status.Convert(err)
			return st.Code(), st.Message()
		}
	}
	return codes.OK, "many messages"
}

// check applies the rules to an answer.
func check(c Call) error {
	switch c.Code {
	case codes.Internal, codes.Unknown:
		return fmt.Errorf("%s is a server bug for a request of a client", c.Code)
	case codes.Unavailable:
		return errors.New("Unavailable: a transport failure or a server that stopped serving")
	case codes.DeadlineExceeded:
		if !c.Streaming {
			return errors.New("a unary call did not answer in time")
		}
	}
	if !c.Decodes && !slices.Contains([]codes.Code{codes.InvalidArgument, codes.Unauthenticated, codes.PermissionDenied}, c.Code) {
		return fmt.Errorf("a request that does not decode must answer InvalidArgument (or refuse the caller), not %s", c.Code)
	}
	return nil
}

// RawCodec is a client codec (grpc.ForceCodecV2) that sends and receives
// the bytes of messages as they are: a message is a *[]byte.
type RawCodec struct{}

func (RawCodec) Marshal(v any) (mem.BufferSlice, error) {
	b, ok := v.(*[]byte)
	if !ok {
		return nil, fmt.Errorf("RawCodec: %T is not *[]byte", v)
	}
	return mem.BufferSlice{mem.SliceBuffer(*b)}, nil
}

func (RawCodec) Unmarshal(data mem.BufferSlice, v any) error {
	b, ok := v.(*[]byte)
	if !ok {
		return fmt.Errorf("RawCodec: %T is not *[]byte", v)
	}
	*b = data.Materialize()
	return nil
}

// Name is "proto": the server decodes the bytes with its proto codec.
func (RawCodec) Name() string { return "proto" }

// PanicLog is a slog.Handler that keeps the records of recovered panics
// (grpcserver.PanicMessage) and drops every other record. Give a server a
// logger of it (slog.New(l)) and the sweep Options.Panics.
type PanicLog struct {
	mu     sync.Mutex
	panics []string
}

var _ slog.Handler = (*PanicLog)(nil)

// Enabled implements slog.Handler.
func (l *PanicLog) Enabled(_ context.Context, lvl slog.Level) bool { return lvl >= slog.LevelError }

// Handle implements slog.Handler.
func (l *PanicLog) Handle(_ context.Context, r slog.Record) error {
	if r.Message != grpcserver.PanicMessage {
		return nil
	}
	var method, value string
	r.Attrs(func(a slog.Attr) bool {
		switch a.Key {
		case "method":
			method = a.Value.String()
		case "panic":
			value = a.Value.String()
		}
		return true
	})
	l.mu.Lock()
	l.panics = append(l.panics, method+": "+value)
	l.mu.Unlock()
	return nil
}

// WithAttrs implements slog.Handler.
func (l *PanicLog) WithAttrs([]slog.Attr) slog.Handler { return l }

// WithGroup implements slog.Handler.
func (l *PanicLog) WithGroup(string) slog.Handler { return l }

// Take returns the panics logged since the last Take.
func (l *PanicLog) Take() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	p := l.panics
	l.panics = nil
	return p
}

// ListServices asks the reflection service of the server at conn for the
// names of its services, sorted.
func ListServices(ctx context.Context, conn *grpc.ClientConn) ([]string, error) {
	stream, err := reflectionpb.NewServerReflectionClient(conn).ServerReflectionInfo(ctx)
	if err != nil {
		return nil, err
	}
	defer func() { _ = stream.CloseSend() }()
	if err := stream.Send(&reflectionpb.ServerReflectionRequest{
		MessageRequest: &reflectionpb.ServerReflectionRequest_ListServices{},
	}); err != nil {
		return nil, err
	}
	resp, err := stream.Recv()
	if err != nil {
		return nil, err
	}
	if e := resp.GetErrorResponse(); e != nil {
		return nil, fmt.Errorf("reflection: %s", e.GetErrorMessage())
	}
	var out []string
	for _, s := range resp.GetListServicesResponse().GetService() {
		out = append(out, s.GetName())
	}
	slices.Sort(out)
	return out, nil
}
