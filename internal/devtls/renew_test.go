package devtls_test

import (
	"bufio"
	"context"
	"crypto/tls"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/edgekit/edgekit/internal/devtls"
)

// waitFor polls cond until it holds or d passes.
func waitFor(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", d, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// echoServer accepts TLS connections and echoes lines until the listener
// closes.
func echoServer(t *testing.T, cfg *tls.Config) string {
	t.Helper()
	lis, err := tls.Listen("tcp", "127.0.0.1:0", cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = lis.Close() })
	go func() {
		for {
			c, err := lis.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				r := bufio.NewReader(c)
				for {
					line, err := r.ReadString('\n')
					if err != nil {
						return
					}
					if _, err := c.Write([]byte(line)); err != nil {
						return
					}
				}
			}()
		}
	}()
	return lis.Addr().String()
}

func echo(t *testing.T, c *tls.Conn, msg string) {
	t.Helper()
	if err := c.SetDeadline(time.Now().Add(10 * time.Second)); err != nil {
		t.Fatal(err)
	}
	if _, err := fmt.Fprintf(c, "%s\n", msg); err != nil {
		t.Fatalf("write on a connection made before renewals: %v", err)
	}
	got, err := bufio.NewReader(c).ReadString('\n')
	if err != nil || got != msg+"\n" {
		t.Fatalf("echo = %q, %v; want %q", got, err, msg)
	}
}

// Both ends renew leaves of a few seconds: every new handshake sees a
// peer certificate that is valid, the leaves change several times, and a
// connection made with the first leaves keeps working after they expired.
func TestRenewerShortLivedLeaves(t *testing.T) {
	t.Parallel()
	ca, err := devtls.OpenCA(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	// Renewed at two thirds of the life: a third (2s) is left for the
	// schedule's lateness on a loaded machine.
	const validity = 6 * time.Second
	srvR, err := ca.Renewer("server", devtls.LeafOptions{Validity: validity}, nil)
	if err != nil {
		t.Fatal(err)
	}
	cliR, err := ca.Renewer("client", devtls.LeafOptions{Validity: validity}, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{}, 2)
	for _, r := range []*devtls.Renewer{srvR, cliR} {
		go func() { _ = r.Start(ctx); done <- struct{}{} }()
	}
	t.Cleanup(func() { cancel(); <-done; <-done })

	var serverNames []string
	srvCfg := srvR.Bundle(ca.Pool()).ServerConfig()
	srvCfg.VerifyConnection = func(cs tls.ConnectionState) error {
		// The client's certificate, seen by the server on this handshake.
		if leaf := cs.PeerCertificates[0]; time.Now().After(leaf.NotAfter) {
			return fmt.Errorf("client presented a certificate expired at %v", leaf.NotAfter)
		}
		return nil
	}
	addr := echoServer(t, srvCfg)
	cliCfg := cliR.Bundle(ca.Pool()).ClientConfig()

	first, err := tls.Dial("tcp", addr, cliCfg)
	if err != nil {
		t.Fatal(err)
	}
	defer first.Close()
	firstLeaf := first.ConnectionState().PeerCertificates[0]
	echo(t, first, "hello")

	seen := map[string]bool{}
	deadline := time.Now().Add(60 * time.Second)
	for i := 0; len(seen) < 4 || time.Now().Before(firstLeaf.NotAfter.Add(time.Second)); i++ {
		if time.Now().After(deadline) {
			t.Fatalf("saw %d server certificates in 60s, want 4 and the first one expired", len(seen))
		}
		c, err := tls.Dial("tcp", addr, cliCfg)
		if err != nil {
			t.Fatalf("handshake %d: %v", i, err)
		}
		leaf := c.ConnectionState().PeerCertificates[0]
		if now := time.Now(); now.After(leaf.NotAfter) || now.Before(leaf.NotBefore) {
			t.Fatalf("handshake %d: server certificate valid %v to %v, now %v", i, leaf.NotBefore, leaf.NotAfter, now)
		}
		echo(t, c, "ping")
		_ = c.Close()
		seen[leaf.SerialNumber.String()] = true
		serverNames = append(serverNames, leaf.Subject.CommonName)
		time.Sleep(50 * time.Millisecond) // pace the traffic, not a synchronisation
	}
	// The first connection outlived its certificates.
	echo(t, first, "still here")
	if srvR.Renewals() < 3 || cliR.Renewals() < 3 {
		t.Errorf("renewals: server %d, client %d; want at least 3 each", srvR.Renewals(), cliR.Renewals())
	}
	for _, n := range serverNames {
		if n != "server" {
			t.Fatalf("server certificate named %q", n)
		}
	}
}

// Processes sharing an authority and a name share the leaf: a second
// Renewer loads the leaf the first issued instead of issuing another.
func TestRenewerSharesLeafOfName(t *testing.T) {
	t.Parallel()
	ca, err := devtls.OpenCA(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	a, err := ca.Renewer("ccrm", devtls.LeafOptions{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, err := ca.Renewer("ccrm", devtls.LeafOptions{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !a.Current().Leaf.Equal(b.Current().Leaf) {
		t.Error("a second Renewer of the same name issued another leaf")
	}
	if got := a.Current().Leaf.NotAfter.Sub(a.Current().Leaf.NotBefore); got > devtls.DefaultLeafValidity+time.Minute {
		t.Errorf("default validity %v, want about %v", got, devtls.DefaultLeafValidity)
	}
	if err := b.Renew(); err != nil {
		t.Fatal(err)
	}
	if b.Renewals() != 0 {
		t.Error("Renew of a fresh leaf replaced it")
	}
}

// A leaf on disk valid for longer than asked (issued before the validity
// was shortened) is replaced when the holder asks (ReplaceLonger, as a
// Renewer does), and kept otherwise: its files are rewritten only when
// they must be.
func TestIssueReplacesLongerLeaf(t *testing.T) {
	t.Parallel()
	ca, err := devtls.OpenCA(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	long, err := ca.Issue("n", devtls.LeafOptions{Validity: devtls.LongLeafValidity})
	if err != nil {
		t.Fatal(err)
	}
	kept, err := ca.Issue("n", devtls.LeafOptions{Validity: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	if !kept.Certificate.Leaf.Equal(long.Certificate.Leaf) {
		t.Fatal("a leaf that fits was issued again because it is valid for longer than asked, without ReplaceLonger")
	}
	short, err := ca.Issue("n", devtls.LeafOptions{Validity: time.Hour, ReplaceLonger: true})
	if err != nil {
		t.Fatal(err)
	}
	if short.Certificate.Leaf.Equal(long.Certificate.Leaf) {
		t.Fatal("a leaf valid for a year was kept when an hour was asked with ReplaceLonger")
	}
	if time.Until(short.Certificate.Leaf.NotAfter) > time.Hour {
		t.Errorf("new leaf expires at %v, want within an hour", short.Certificate.Leaf.NotAfter)
	}
}

// A FileRenewer reloads changed files, and keeps the current certificate
// while the files do not load.
func TestFileRenewerReloads(t *testing.T) {
	t.Parallel()
	ca, err := devtls.OpenCA(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	other, err := devtls.OpenCA(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := other.Issue("svc", devtls.LeafOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := ca.Issue("svc", devtls.LeafOptions{}); err != nil {
		t.Fatal(err)
	}
	b, err := devtls.LoadRenewingBundle(ca.CertPath("svc"), ca.KeyPath("svc"), ca.Dir()+"/"+devtls.CACertFile, 20*time.Millisecond, nil)
	if err != nil {
		t.Fatal(err)
	}
	r := b.Renewer()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = r.Start(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })

	// A key that does not match the certificate (it does not load; the
	// current certificate stays in use).
	key, err := os.ReadFile(other.KeyPath("svc"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(ca.KeyPath("svc"), key, 0o600); err != nil {
		t.Fatal(err)
	}
	// Then the matching certificate: it is loaded.
	crt, err := os.ReadFile(other.CertPath("svc"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(ca.CertPath("svc"), crt, 0o644); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 10*time.Second, "the changed files to be loaded", func() bool { return r.Renewals() == 1 })
	if err := r.Current().Leaf.CheckSignatureFrom(other.Certificate()); err != nil {
		t.Errorf("current certificate is not the new file's: %v", err)
	}
	if cfg := b.ServerConfig(); cfg.GetCertificate == nil || len(cfg.Certificates) != 0 {
		t.Error("a renewing bundle's server configuration does not take the certificate per handshake")
	}
}
