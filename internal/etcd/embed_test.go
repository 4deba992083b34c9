package etcd_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"log/slog"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/edgekit/edgekit/internal/etcd"
	"github.com/edgekit/edgekit/internal/testenv/logbuf"
)

func start(t *testing.T, cfg etcd.EmbedConfig) *etcd.Embedded {
	t.Helper()
	cfg.UnsafeNoFsync = true
	m, err := etcd.StartEmbedded(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := m.Close(); err != nil {
			t.Error(err)
		}
	})
	return m
}

func TestEmbeddedRestartOnSameDataDir(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	m := start(t, etcd.EmbedConfig{DataDir: dir})
	if eps := m.Endpoints(); len(eps) != 1 || !strings.HasPrefix(eps[0], "http://127.0.0.1:") || strings.HasSuffix(eps[0], ":0") {
		t.Fatalf("endpoints %v", eps)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := m.Client().Put(ctx, "k", "v"); err != nil {
		t.Fatal(err)
	}
	cfg := m.Config()
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	if err := m.Close(); err != nil { // idempotent
		t.Fatal(err)
	}
	m2 := start(t, cfg)
	if m2.Endpoints()[0] != m.Endpoints()[0] {
		t.Fatalf("restart moved from %v to %v", m.Endpoints(), m2.Endpoints())
	}
	resp, err := m2.Client().Get(ctx, "k")
	if err != nil || len(resp.Kvs) != 1 || string(resp.Kvs[0].Value) != "v" {
		t.Fatalf("after restart: %v %v", resp, err)
	}
}

func TestEmbeddedConfigErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		cfg  etcd.EmbedConfig
		want string
	}{
		{"no data dir", etcd.EmbedConfig{}, "no data directory"},
		{"remote client", etcd.EmbedConfig{DataDir: "d", ClientAddr: "10.0.0.1:2379"}, "not a loopback address"},
		{"remote peer url", etcd.EmbedConfig{DataDir: "d", PeerAddr: "http://192.168.1.1:2380"}, "not a loopback address"},
		{"bad port", etcd.EmbedConfig{DataDir: "d", ClientAddr: "127.0.0.1:99999"}, "bad port"},
		{"no port", etcd.EmbedConfig{DataDir: "d", ClientAddr: "127.0.0.1"}, "missing port"},
		{"cluster with free peer port", etcd.EmbedConfig{DataDir: "d", InitialCluster: "a=http://127.0.0.1:1,b=http://127.0.0.1:2"}, "fixed peer port"},
	} {
		_, err := etcd.StartEmbedded(context.Background(), tc.cfg)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err %v, want %q", tc.name, err, tc.want)
		}
	}
}

func TestEmbeddedFixedPortTaken(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	_, err = etcd.StartEmbedded(context.Background(), etcd.EmbedConfig{DataDir: t.TempDir(), ClientAddr: l.Addr().String()})
	if !etcd.IsAddrInUse(err) {
		t.Fatalf("err %v, want address in use", err)
	}
}

func TestEmbeddedLogsWarningsOnly(t *testing.T) {
	t.Parallel()
	var buf logbuf.Buffer
	l := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	m := start(t, etcd.EmbedConfig{DataDir: t.TempDir(), Logger: l})
	_ = m.Close()
	out := buf.String()
	// etcd logs dozens of info lines while it starts; none may pass.
	if strings.Contains(out, "level=INFO") || strings.Contains(out, "level=DEBUG") {
		t.Fatalf("info or debug lines passed:\n%s", out)
	}
	// etcd warns that gRPC and HTTP share the client port; warnings pass.
	if !strings.Contains(out, "level=WARN") || !strings.Contains(out, "logger=etcd") {
		t.Fatalf("no warning from etcd reached the logger:\n%s", out)
	}
}

func TestEmbeddedClientTLS(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ca, caKey := newCA(t)
	writePEM(t, filepath.Join(dir, "ca.pem"), "CERTIFICATE", ca.Raw)
	issue(t, dir, "server", ca, caKey, x509.ExtKeyUsageServerAuth)
	issue(t, dir, "client", ca, caKey, x509.ExtKeyUsageClientAuth)
	m := start(t, etcd.EmbedConfig{
		DataDir: filepath.Join(dir, "data"),
		ClientTLS: &etcd.ServerTLS{
			CertFile: filepath.Join(dir, "server.pem"), KeyFile: filepath.Join(dir, "server-key.pem"),
			TrustedCAFile: filepath.Join(dir, "ca.pem"), ClientCertAuth: true,
			ClientCertFile: filepath.Join(dir, "client.pem"), ClientKeyFile: filepath.Join(dir, "client-key.pem"),
		},
	})
	if !strings.HasPrefix(m.Endpoints()[0], "https://") {
		t.Fatalf("endpoints %v", m.Endpoints())
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := m.Client().Put(ctx, "k", "v"); err != nil {
		t.Fatalf("put over TLS: %v", err)
	}
	// Without a client certificate the member refuses.
	anon, err := etcd.NewClient(etcd.ClientConfig{Endpoints: m.Endpoints(), CAFile: filepath.Join(dir, "ca.pem")})
	if err != nil {
		t.Fatal(err)
	}
	defer anon.Close()
	short, cancel2 := context.WithTimeout(ctx, time.Second)
	defer cancel2()
	if _, err := anon.Put(short, "k", "v"); err == nil {
		t.Fatal("put without a client certificate succeeded")
	}
}

func TestNewClientErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		cfg  etcd.ClientConfig
		want string
	}{
		{etcd.ClientConfig{}, "no endpoints"},
		{etcd.ClientConfig{Endpoints: []string{""}}, "empty endpoint"},
		{etcd.ClientConfig{Endpoints: []string{"127.0.0.1:1"}, CertFile: "c.pem"}, "set both or neither"},
		{etcd.ClientConfig{Endpoints: []string{"127.0.0.1:1"}, CAFile: "/nonexistent/ca.pem"}, "ca.pem"},
	} {
		if _, err := etcd.NewClient(tc.cfg); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: err %v, want %q", tc.cfg, err, tc.want)
		}
	}
}

func newCA(t *testing.T) (*x509.Certificate, *ecdsa.PrivateKey) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return cert, key
}

func issue(t *testing.T, dir, name string, ca *x509.Certificate, caKey *ecdsa.PrivateKey, usage x509.ExtKeyUsage) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{usage},
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, DNSNames: []string{"localhost"},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	kb, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	writePEM(t, filepath.Join(dir, name+".pem"), "CERTIFICATE", der)
	writePEM(t, filepath.Join(dir, name+"-key.pem"), "EC PRIVATE KEY", kb)
}

func writePEM(t *testing.T, path, typ string, der []byte) {
	t.Helper()
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
}
