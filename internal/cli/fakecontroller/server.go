// Package fakecontroller is a test double of the controller's gRPC API for
// the command-line tools' tests: one in-memory server on 127.0.0.1:0 that
// answers every method of the edgeproto services by reflection over their
// descriptors (Create, Update, Delete, Show, Watch of every kind, Settings),
// streams a fixed, deterministic progress for the kinds a resource manager
// acts on, and records every request.
//
// It models the API's contract, not the controller: no etcd, no resource
// manager, no integrity rules beyond AlreadyExists and NotFound, and field
// checks through apifields and the field schema. Fail makes the next
// changes of one object end in an error state; Token requires a bearer
// token; TLS serves with a certificate of a fresh CA.
package fakecontroller

import (
	"context"
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"

	_ "github.com/edgekit/edgekit/edgeproto" // registers the services
	"github.com/edgekit/edgekit/internal/cli/clitest"
)

// Options configure a Server.
type Options struct {
	// Token, when set, is the bearer token every call must carry.
	Token string
	// TLS serves TLS with a server certificate for 127.0.0.1 and
	// localhost, signed by a new CA written to CAFile.
	TLS bool
}

// Call is one request the server received.
type Call struct {
	Method  string        // full method name, "/edgeproto.v1.CloudletService/CreateCloudlet"
	Request proto.Message // a copy of the request
	Token   string        // the bearer token it carried, "" when none
}

// Server is a running fake controller.
type Server struct {
	// Addr is the address the server listens on.
	Addr string
	// CAFile is the PEM file of the CA that signed the server's
	// certificate, with Options.TLS.
	CAFile string

	opts Options
	grpc *grpc.Server

	mu       sync.Mutex
	objects  map[protoreflect.FullName]map[string]proto.Message // by message, by key string
	settings proto.Message
	calls    []Call
	fail     map[string][]string // key string -> errors of its next changes
	hold     map[string]chan struct{}
	watchers map[*watcher]bool
}

// Start starts a server on 127.0.0.1:0; it stops when the test ends.
func Start(t testing.TB, opts Options) *Server {
	t.Helper()
	s := &Server{
		opts:     opts,
		objects:  map[protoreflect.FullName]map[string]proto.Message{},
		fail:     map[string][]string{},
		hold:     map[string]chan struct{}{},
		watchers: map[*watcher]bool{},
	}
	mt, err := protoregistry.GlobalTypes.FindMessageByName("edgeproto.v1.Settings")
	if err != nil {
		t.Fatal(err)
	}
	s.settings = mt.New().Interface()
	serverOpts := []grpc.ServerOption{grpc.UnknownServiceHandler(s.handle)}
	if opts.TLS {
		ca, err := clitest.NewCA(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		cert, err := ca.Server()
		if err != nil {
			t.Fatal(err)
		}
		s.CAFile = ca.CAFile
		serverOpts = append(serverOpts, grpc.Creds(credentials.NewServerTLSFromCert(&cert)))
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s.Addr = lis.Addr().String()
	s.grpc = grpc.NewServer(serverOpts...)
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = s.grpc.Serve(lis)
	}()
	t.Cleanup(func() {
		s.grpc.Stop()
		<-done
	})
	return s
}

// Calls returns the requests received so far, oldest first.
func (s *Server) Calls() []Call {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Call(nil), s.calls...)
}

// LastCall returns the newest request to a method whose name ends in
// method ("CreateCloudlet"), and whether there was one.
func (s *Server) LastCall(method string) (Call, bool) {
	calls := s.Calls()
	for i := len(calls) - 1; i >= 0; i-- {
		if strings.HasSuffix(calls[i].Method, "/"+method) {
			return calls[i], true
		}
	}
	return Call{}, false
}

// Fail makes every later create, update or delete of the object with key
// string key (fieldmap.KeyString of its key) end in its error state with
// errs.
func (s *Server) Fail(key string, errs ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.fail[key] = errs
}

// Hold makes the changes of the object with key string key stop after
// their first progress message until release is called (or the caller
// goes away).
func (s *Server) Hold(key string) (release func()) {
	ch := make(chan struct{})
	s.mu.Lock()
	s.hold[key] = ch
	s.mu.Unlock()
	var once sync.Once
	return func() { once.Do(func() { close(ch) }) }
}

// Put stores an object (an object or an Info) as is, notifying watchers.
func (s *Server) Put(m proto.Message) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.put(proto.Clone(m))
}

// Get returns a copy of the stored object of message name with key string
// key, or nil.
func (s *Server) Get(name protoreflect.FullName, key string) proto.Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	if m := s.objects[name][key]; m != nil {
		return proto.Clone(m)
	}
	return nil
}

// handle serves every call.
func (s *Server) handle(_ any, stream grpc.ServerStream) error {
	full, ok := grpc.MethodFromServerStream(stream)
	if !ok {
		return status.Error(codes.Internal, "no method")
	}
	md, err := methodDesc(full)
	if err != nil {
		return status.Error(codes.Unimplemented, err.Error())
	}
	token := bearer(stream.Context())
	if s.opts.Token != "" && token != s.opts.Token {
		return status.Error(codes.Unauthenticated, "missing or wrong bearer token")
	}
	req, err := newMessage(md.Input())
	if err != nil {
		return status.Error(codes.Internal, err.Error())
	}
	if err := stream.RecvMsg(req); err != nil {
		return err
	}
	s.mu.Lock()
	s.calls = append(s.calls, Call{Method: full, Request: proto.Clone(req), Token: token})
	s.mu.Unlock()
	c := &call{s: s, md: md, req: req, stream: stream}
	return c.serve()
}

// methodDesc finds the descriptor of "/pkg.Service/Method".
func methodDesc(full string) (protoreflect.MethodDescriptor, error) {
	svc, method, ok := strings.Cut(strings.TrimPrefix(full, "/"), "/")
	if !ok {
		return nil, fmt.Errorf("bad method name %q", full)
	}
	d, err := protoregistry.GlobalFiles.FindDescriptorByName(protoreflect.FullName(svc))
	if err != nil {
		return nil, fmt.Errorf("unknown service %s", svc)
	}
	sd, ok := d.(protoreflect.ServiceDescriptor)
	if !ok {
		return nil, fmt.Errorf("%s is not a service", svc)
	}
	md := sd.Methods().ByName(protoreflect.Name(method))
	if md == nil {
		return nil, fmt.Errorf("unknown method %s", full)
	}
	return md, nil
}

func bearer(ctx context.Context) string {
	md, _ := metadata.FromIncomingContext(ctx)
	for _, v := range md.Get("authorization") {
		if t, ok := strings.CutPrefix(v, "Bearer "); ok {
			return t
		}
	}
	return ""
}

func newMessage(md protoreflect.MessageDescriptor) (proto.Message, error) {
	mt, err := protoregistry.GlobalTypes.FindMessageByName(md.FullName())
	if err != nil {
		return nil, err
	}
	return mt.New().Interface(), nil
}
