package clientconn_test

import (
	"context"
	"crypto/tls"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/spf13/pflag"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"

	"github.com/edgekit/edgekit/internal/cli/clientconfig"
	"github.com/edgekit/edgekit/internal/cli/clientconn"
	"github.com/edgekit/edgekit/internal/cli/clitest"
)

// server is a gRPC server with the health service that records the
// authorization metadata of every call.
type server struct {
	addr string
	mu   sync.Mutex
	auth []string
}

func (s *server) seen() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.auth...)
}

func startServer(t *testing.T, opts ...grpc.ServerOption) *server {
	t.Helper()
	s := &server{}
	opts = append(opts, grpc.UnaryInterceptor(func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
		md, _ := metadata.FromIncomingContext(ctx)
		s.mu.Lock()
		s.auth = append(s.auth, strings.Join(md.Get("authorization"), ","))
		s.mu.Unlock()
		return h(ctx, req)
	}))
	g := grpc.NewServer(opts...)
	healthpb.RegisterHealthServer(g, health.NewServer())
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s.addr = lis.Addr().String()
	done := make(chan struct{})
	go func() { defer close(done); _ = g.Serve(lis) }()
	t.Cleanup(func() { g.Stop(); <-done })
	return s
}

func check(t *testing.T, o *clientconn.Options) error {
	t.Helper()
	conn, err := o.Dial()
	if err != nil {
		return err
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err = healthpb.NewHealthClient(conn).Check(ctx, &healthpb.HealthCheckRequest{})
	return err
}

func TestTLSAndToken(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ca, err := clitest.NewCA(dir)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := ca.Server()
	if err != nil {
		t.Fatal(err)
	}
	srv := startServer(t, grpc.Creds(credentials.NewTLS(&tls.Config{
		Certificates: []tls.Certificate{cert}, ClientCAs: ca.Pool, ClientAuth: tls.RequireAndVerifyClientCert,
	})))
	clientCert, clientKey, err := ca.Client("alice")
	if err != nil {
		t.Fatal(err)
	}
	ok := &clientconn.Options{Addr: srv.addr, CAFile: ca.CAFile, CertFile: clientCert, KeyFile: clientKey, Token: "t0k"}
	if err := check(t, ok); err != nil {
		t.Fatalf("mutual TLS with a token: %v", err)
	}
	if got := srv.seen(); len(got) != 1 || got[0] != "Bearer t0k" {
		t.Errorf("authorization seen by the server: %q", got)
	}
	if err := check(t, &clientconn.Options{Addr: srv.addr, CAFile: ca.CAFile}); err == nil {
		t.Error("a client without a certificate got through a server that requires one")
	}
	err = check(t, &clientconn.Options{Addr: srv.addr, CertFile: clientCert, KeyFile: clientKey})
	if err == nil || !strings.Contains(clientconn.Hint(err, false), "--ca-file") {
		t.Errorf("unknown CA: %v; hint %q", err, clientconn.Hint(err, false))
	}
	err = check(t, &clientconn.Options{Addr: srv.addr, Insecure: true})
	if err == nil || !strings.Contains(clientconn.Hint(err, true), "drop --insecure") {
		t.Errorf("plaintext to TLS: %v; hint %q", err, clientconn.Hint(err, true))
	}
}

func TestPlaintext(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	if err := check(t, &clientconn.Options{Addr: srv.addr, Insecure: true, Token: "x"}); err != nil {
		t.Fatalf("plaintext with --insecure: %v", err)
	}
	if got := srv.seen(); len(got) != 1 || got[0] != "Bearer x" {
		t.Errorf("authorization seen: %q", got)
	}
	err := check(t, &clientconn.Options{Addr: srv.addr})
	if err == nil || !strings.Contains(clientconn.Hint(err, false), "add --insecure") {
		t.Errorf("TLS to plaintext: %v; hint %q", err, clientconn.Hint(err, false))
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := lis.Addr().String()
	lis.Close()
	err = check(t, &clientconn.Options{Addr: closed, Insecure: true})
	if err == nil || !strings.Contains(clientconn.Hint(err, true), "nothing listens") {
		t.Errorf("nothing listening: %v; hint %q", err, clientconn.Hint(err, true))
	}
}

func TestDialRefusesBadSettings(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	notPEM := filepath.Join(dir, "x.pem")
	if err := os.WriteFile(notPEM, []byte("nope"), 0o600); err != nil {
		t.Fatal(err)
	}
	cases := map[string]clientconn.Options{
		"--insecure cannot be combined":   {Addr: "127.0.0.1:1", Insecure: true, CAFile: notPEM},
		"holds no PEM certificate":        {Addr: "127.0.0.1:1", CAFile: notPEM},
		"--cert-file and --key-file go":   {Addr: "127.0.0.1:1", CertFile: notPEM},
		"--ca-file: open":                 {Addr: "127.0.0.1:1", CAFile: filepath.Join(dir, "missing.pem")},
		"client certificate: tls: failed": {Addr: "127.0.0.1:1", CertFile: notPEM, KeyFile: notPEM},
	}
	for want, o := range cases {
		if _, err := o.Dial(); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Dial(%+v) = %v, want an error containing %q", o, err, want)
		}
	}
}

func TestResolvePrecedence(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ctxToken := filepath.Join(dir, "ctx.token")
	flagToken := filepath.Join(dir, "flag.token")
	empty := filepath.Join(dir, "empty.token")
	for p, v := range map[string]string{ctxToken: " from-context\n", flagToken: "from-flag-file", empty: "\n"} {
		if err := os.WriteFile(p, []byte(v), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	ctx := clientconfig.Context{Name: "c", Addr: "10.0.0.1:1", TokenFile: ctxToken, CAFile: "/ctx/ca.pem", Insecure: true}
	env := func(k string) string {
		if k == clientconn.EnvToken {
			return "from-env"
		}
		return ""
	}
	noEnv := func(string) string { return "" }
	parse := func(args ...string) (*clientconn.Options, *pflag.FlagSet) {
		var o clientconn.Options
		fs := pflag.NewFlagSet("x", pflag.ContinueOnError)
		o.AddFlags(fs)
		if err := fs.Parse(args); err != nil {
			t.Fatal(err)
		}
		return &o, fs
	}
	cases := []struct {
		args  []string
		ctx   clientconfig.Context
		env   func(string) string
		token string
		addr  string
	}{
		{nil, clientconfig.Context{}, noEnv, "", clientconn.DefaultAddr},
		{nil, ctx, noEnv, "from-context", "10.0.0.1:1"},
		{nil, ctx, env, "from-env", "10.0.0.1:1"},
		{[]string{"--token-file", flagToken}, ctx, env, "from-flag-file", "10.0.0.1:1"},
		{[]string{"--token", "from-flag", "--token-file", flagToken, "--addr", "127.0.0.1:9"}, ctx, env, "from-flag", "127.0.0.1:9"},
	}
	for _, c := range cases {
		o, fs := parse(c.args...)
		if err := o.Resolve(fs, c.ctx, c.env); err != nil {
			t.Fatalf("%v: %v", c.args, err)
		}
		if o.Token != c.token || o.Addr != c.addr {
			t.Errorf("%v with context %q: token %q addr %q, want %q %q", c.args, c.ctx.Name, o.Token, o.Addr, c.token, c.addr)
		}
	}
	o, fs := parse("--ca-file", "/flag/ca.pem")
	if err := o.Resolve(fs, ctx, noEnv); err != nil {
		t.Fatal(err)
	}
	if o.Insecure || o.CAFile != "/flag/ca.pem" {
		t.Errorf("a TLS flag did not override the context's insecure: %+v", o)
	}
	tlsCtx := clientconfig.Context{CAFile: "/ctx/ca.pem", CertFile: "/ctx/c.pem", KeyFile: "/ctx/k.pem", ServerName: "ctl"}
	o, fs = parse("--insecure")
	if err := o.Resolve(fs, tlsCtx, noEnv); err != nil {
		t.Fatal(err)
	}
	if !o.Insecure || o.CAFile != "" || o.CertFile != "" || o.ServerName != "" {
		t.Errorf("--insecure kept the context's TLS settings: %+v", o)
	}
	o, fs = parse("--server-name", "x")
	if err := o.Resolve(fs, tlsCtx, noEnv); err != nil {
		t.Fatal(err)
	}
	if o.Insecure || o.CAFile != "/ctx/ca.pem" || o.KeyFile != "/ctx/k.pem" || o.ServerName != "x" {
		t.Errorf("TLS context with a flag: %+v", o)
	}
	o, fs = parse("--token-file", empty)
	if err := o.Resolve(fs, clientconfig.Context{}, noEnv); err == nil || !strings.Contains(err.Error(), "is empty") {
		t.Errorf("empty token file: %v", err)
	}
}
