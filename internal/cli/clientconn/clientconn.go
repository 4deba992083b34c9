// Package clientconn connects command-line clients to a gRPC server of the
// project (the controller, a FLUIDOS node): the connection flags (address,
// token, TLS files, plaintext), their defaults from a clientconfig context
// and the environment, and the dial itself.
//
// The token travels as "authorization: Bearer <token>" metadata on every
// call. TLS is the default: --ca-file verifies the server (the system roots
// when none is given), --cert-file and --key-file present a client
// certificate, --insecure talks plaintext (and then sends the token in
// clear, which only makes sense on loopback).
package clientconn

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/pflag"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/edgekit/edgekit/internal/cli/clientconfig"
)

// EnvToken is the environment variable read for the token when --token is
// not given.
const EnvToken = "EDGECTL_TOKEN"

// DefaultAddr is the controller's default listen address.
const DefaultAddr = "127.0.0.1:55001"

// Options are the connection settings.
type Options struct {
	Addr       string
	Token      string
	TokenFile  string
	CAFile     string
	CertFile   string
	KeyFile    string
	ServerName string
	Insecure   bool
}

// AddFlags defines the connection flags on fs, writing into o.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.Addr, "addr", "", "server address, host:port (default "+DefaultAddr+", or the context's)")
	fs.StringVar(&o.Token, "token", "", "bearer token (default $"+EnvToken+", or the context's token file)")
	fs.StringVar(&o.TokenFile, "token-file", "", "file holding the bearer token")
	fs.StringVar(&o.CAFile, "ca-file", "", "PEM certificates that verify the server (default: the system's)")
	fs.StringVar(&o.CertFile, "cert-file", "", "client certificate (PEM), for mutual TLS")
	fs.StringVar(&o.KeyFile, "key-file", "", "client private key (PEM), for mutual TLS")
	fs.StringVar(&o.ServerName, "server-name", "", "name to verify in the server's certificate (default: the address's host)")
	fs.BoolVar(&o.Insecure, "insecure", false, "talk plaintext, without TLS")
}

// Resolve fills what fs did not set from the context and the environment,
// in this order: flag, environment ($EDGECTL_TOKEN for the token), context,
// default. The transport is taken whole from one place: --insecure given
// ignores the context's TLS files; TLS files given ignore the context's
// insecure. It reads the token file when the token comes from one.
func (o *Options) Resolve(fs *pflag.FlagSet, ctx clientconfig.Context, getenv func(string) string) error {
	changed := func(name string) bool { return fs != nil && fs.Changed(name) }
	fill := func(name string, dst *string, from string) {
		if !changed(name) && *dst == "" {
			*dst = from
		}
	}
	fill("addr", &o.Addr, ctx.Addr)
	fill("addr", &o.Addr, DefaultAddr)
	// The transport is chosen as a whole: --insecure on the command line
	// drops the context's TLS files, TLS files on the command line drop
	// the context's insecure.
	tlsFlags := changed("ca-file") || changed("cert-file") || changed("key-file")
	switch {
	case changed("insecure") && o.Insecure:
	case !changed("insecure") && ctx.Insecure && !tlsFlags:
		o.Insecure = true
	default:
		fill("ca-file", &o.CAFile, ctx.CAFile)
		fill("cert-file", &o.CertFile, ctx.CertFile)
		fill("key-file", &o.KeyFile, ctx.KeyFile)
		fill("server-name", &o.ServerName, ctx.ServerName)
	}
	if o.Token != "" {
		return nil
	}
	if changed("token-file") {
		return o.readToken(o.TokenFile)
	}
	if t := getenv(EnvToken); t != "" {
		o.Token = t
		return nil
	}
	if ctx.TokenFile != "" {
		return o.readToken(ctx.TokenFile)
	}
	return nil
}

func (o *Options) readToken(path string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("token: %w", err)
	}
	o.Token = strings.TrimSpace(string(b))
	if o.Token == "" {
		return fmt.Errorf("token file %s is empty", path)
	}
	return nil
}

// Dial returns a client connection to o.Addr (grpc.NewClient: it connects
// on the first call).
func (o *Options) Dial(extra ...grpc.DialOption) (*grpc.ClientConn, error) {
	var creds credentials.TransportCredentials
	if o.Insecure {
		if o.CAFile != "" || o.CertFile != "" || o.KeyFile != "" {
			return nil, errors.New("--insecure cannot be combined with --ca-file, --cert-file or --key-file")
		}
		creds = insecure.NewCredentials()
	} else {
		cfg, err := o.tlsConfig()
		if err != nil {
			return nil, err
		}
		creds = credentials.NewTLS(cfg)
	}
	opts := append([]grpc.DialOption{grpc.WithTransportCredentials(creds)}, extra...)
	if o.Token != "" {
		opts = append(opts, grpc.WithPerRPCCredentials(bearer{token: o.Token, secure: !o.Insecure}))
	}
	conn, err := grpc.NewClient(o.Addr, opts...)
	if err != nil {
		return nil, fmt.Errorf("connect to %s: %w", o.Addr, err)
	}
	return conn, nil
}

func (o *Options) tlsConfig() (*tls.Config, error) {
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: o.ServerName}
	if o.CAFile != "" {
		pem, err := os.ReadFile(o.CAFile)
		if err != nil {
			return nil, fmt.Errorf("--ca-file: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("--ca-file %s holds no PEM certificate", o.CAFile)
		}
		cfg.RootCAs = pool
	}
	if (o.CertFile == "") != (o.KeyFile == "") {
		return nil, errors.New("--cert-file and --key-file go together")
	}
	if o.CertFile != "" {
		cert, err := tls.LoadX509KeyPair(o.CertFile, o.KeyFile)
		if err != nil {
			return nil, fmt.Errorf("client certificate: %w", err)
		}
		cfg.Certificates = []tls.Certificate{cert}
	}
	return cfg, nil
}

// bearer sends the token with every call.
type bearer struct {
	token  string
	secure bool
}

var _ credentials.PerRPCCredentials = bearer{}

func (b bearer) GetRequestMetadata(context.Context, ...string) (map[string]string, error) {
	return map[string]string{"authorization": "Bearer " + b.token}, nil
}

// RequireTransportSecurity is false only with --insecure, which the user
// asked for.
func (b bearer) RequireTransportSecurity() bool { return b.secure }

// Hint returns advice for a call error that looks like a TLS mismatch
// between client and server, or "" for any other error.
func Hint(err error, insecureMode bool) string {
	if status.Code(err) != codes.Unavailable {
		return ""
	}
	msg := status.Convert(err).Message()
	switch {
	case !insecureMode && strings.Contains(msg, "first record does not look like a TLS handshake"):
		return "the server talks plaintext: add --insecure (or start it with TLS)"
	case insecureMode && (strings.Contains(msg, "error reading server preface") || strings.Contains(msg, "connection closed before server preface")):
		return "the server may require TLS: drop --insecure and give --ca-file"
	case strings.Contains(msg, "certificate signed by unknown authority"):
		return "the server's certificate is not signed by a known CA: give its CA with --ca-file"
	case strings.Contains(msg, "connection refused"):
		return "nothing listens there: is the server running, and is --addr right?"
	}
	return ""
}
