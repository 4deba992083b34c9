package devtls_test

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/edgekit/edgekit/internal/devtls"
)

// pair issues a server and a client leaf of one authority.
func pair(t *testing.T) (ca *devtls.CA, server, client *devtls.Bundle) {
	t.Helper()
	ca, err := devtls.OpenCA(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if server, err = ca.Issue("server", devtls.LeafOptions{}); err != nil {
		t.Fatal(err)
	}
	if client, err = ca.Issue("client", devtls.LeafOptions{}); err != nil {
		t.Fatal(err)
	}
	return ca, server, client
}

func TestMutualTLSOverHTTP(t *testing.T) {
	t.Parallel()
	_, server, client := pair(t)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id, err := devtls.PeerFromRequest(r)
		if err != nil {
			http.Error(w, err.Error(), http.StatusUnauthorized)
			return
		}
		_, _ = io.WriteString(w, id.Name)
	}))
	srv.TLS = server.ServerConfig()
	srv.StartTLS()
	t.Cleanup(srv.Close)

	get := func(cfg *tls.Config) (string, *tls.ConnectionState, error) {
		c := &http.Client{Transport: &http.Transport{TLSClientConfig: cfg}, Timeout: 10 * time.Second}
		defer c.CloseIdleConnections()
		resp, err := c.Get(srv.URL)
		if err != nil {
			return "", nil, err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		return string(b), resp.TLS, err
	}

	body, cs, err := get(client.ClientConfig())
	if err != nil {
		t.Fatal(err)
	}
	if body != "client" {
		t.Errorf("server saw peer %q, want client", body)
	}
	id, err := devtls.PeerIdentity(cs)
	if err != nil || id.Name != "server" {
		t.Errorf("client saw server %q (%v), want server", id.Name, err)
	}

	// No client certificate: refused in the handshake.
	noCert := client.ClientConfig()
	noCert.Certificates = nil
	if _, _, err := get(noCert); err == nil {
		t.Error("a client without certificate was served")
	}
	// A client certificate of another authority: refused.
	_, _, stranger := pair(t)
	foreign := stranger.ClientConfig()
	foreign.RootCAs = client.Roots
	if _, _, err := get(foreign); err == nil {
		t.Error("a client certificate of another authority was accepted")
	}
	// A server of another authority: the client refuses it.
	if _, _, err := get(stranger.ClientConfig()); err == nil {
		t.Error("the client accepted a server of another authority")
	}
}

func TestPeerIdentityWithoutVerifiedCertificate(t *testing.T) {
	t.Parallel()
	for _, cs := range []*tls.ConnectionState{nil, {}} {
		if _, err := devtls.PeerIdentity(cs); !errors.Is(err, devtls.ErrNoPeerCertificate) {
			t.Errorf("PeerIdentity(%v) = %v, want ErrNoPeerCertificate", cs, err)
		}
	}
	if _, err := devtls.PeerFromRequest(httptest.NewRequest(http.MethodGet, "/", nil)); !errors.Is(err, devtls.ErrNoPeerCertificate) {
		t.Errorf("PeerFromRequest on plain HTTP = %v, want ErrNoPeerCertificate", err)
	}
	if _, err := devtls.PeerFromContext(context.Background()); !errors.Is(err, devtls.ErrNoPeerCertificate) {
		t.Errorf("PeerFromContext without peer = %v, want ErrNoPeerCertificate", err)
	}
}

func TestMutualTLSOverGRPC(t *testing.T) {
	t.Parallel()
	_, server, client := pair(t)
	seen := make(chan string, 1)
	srv := grpc.NewServer(
		grpc.Creds(credentials.NewTLS(server.ServerConfig())),
		grpc.UnaryInterceptor(func(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
			id, err := devtls.PeerFromContext(ctx)
			if err != nil {
				return nil, err
			}
			seen <- id.Name
			return h(ctx, req)
		}),
	)
	healthpb.RegisterHealthServer(srv, health.NewServer())
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = srv.Serve(lis) }()
	t.Cleanup(srv.Stop)

	conn, err := grpc.NewClient(lis.Addr().String(), grpc.WithTransportCredentials(credentials.NewTLS(client.ClientConfig())))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := healthpb.NewHealthClient(conn).Check(ctx, &healthpb.HealthCheckRequest{}); err != nil {
		t.Fatal(err)
	}
	if got := <-seen; got != "client" {
		t.Errorf("server saw peer %q, want client", got)
	}
}
