package devtls_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"net"
	"testing"
	"time"

	"github.com/edgekit/edgekit/internal/devtls"
)

func csrFor(t *testing.T, name string) []byte {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{Subject: pkix.Name{CommonName: name}}, key)
	if err != nil {
		t.Fatal(err)
	}
	return der
}

// A party renews its own identity, keeping its names and addresses, and
// nothing else.
func TestRenewForOwnIdentityOnly(t *testing.T) {
	t.Parallel()
	ca, err := devtls.OpenCA(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	b, err := ca.Issue("crm-op.site1", devtls.LeafOptions{DNSNames: []string{"edge.example.org"}, IPs: []net.IP{net.ParseIP("10.1.2.3")}})
	if err != nil {
		t.Fatal(err)
	}
	cur := b.Certificate.Leaf
	got, err := ca.RenewFor(cur, csrFor(t, "crm-op.site1"), time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if got.Subject.CommonName != "crm-op.site1" || got.Equal(cur) || time.Until(got.NotAfter) > time.Hour {
		t.Errorf("renewed %q until %v", got.Subject.CommonName, got.NotAfter)
	}
	if err := got.VerifyHostname("edge.example.org"); err != nil {
		t.Error(err)
	}
	if err := got.VerifyHostname("10.1.2.3"); err != nil {
		t.Error(err)
	}
	if _, err := got.Verify(x509.VerifyOptions{Roots: ca.Pool(), KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
		t.Error(err)
	}

	// Another identity, with a valid certificate of the authority.
	if _, err := ca.RenewFor(cur, csrFor(t, "controller"), time.Hour); !errors.Is(err, devtls.ErrNotOwnIdentity) {
		t.Errorf("a request for another name: %v, want ErrNotOwnIdentity", err)
	}
	// A certificate of another authority.
	other, err := devtls.OpenCA(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ob, err := other.Issue("crm-op.site1", devtls.LeafOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ca.RenewFor(ob.Certificate.Leaf, csrFor(t, "crm-op.site1"), time.Hour); err == nil {
		t.Error("a certificate of another authority was renewed")
	}
	// A request whose signature does not hold.
	bad := csrFor(t, "crm-op.site1")
	bad[len(bad)-3] ^= 0xff
	if _, err := ca.RenewFor(cur, bad, time.Hour); err == nil {
		t.Error("a request with a broken signature was signed")
	}
	if _, err := ca.RenewFor(nil, csrFor(t, "x"), time.Hour); !errors.Is(err, devtls.ErrNoPeerCertificate) {
		t.Errorf("no certificate: %v, want ErrNoPeerCertificate", err)
	}
}

// A RemoteRenewer renews through its renew function with a new key each
// time, under its own name.
func TestRemoteRenewer(t *testing.T) {
	t.Parallel()
	ca, err := devtls.OpenCA(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	b, err := ca.Issue("ccrm", devtls.LeafOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var r *devtls.Renewer
	r, err = devtls.RemoteRenewer(b.Certificate, func(_ context.Context, csr []byte) ([]byte, error) {
		c, err := ca.RenewFor(r.Current().Leaf, csr, time.Hour)
		if err != nil {
			return nil, err
		}
		return c.Raw, nil
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !r.Current().Leaf.Equal(b.Certificate.Leaf) {
		t.Fatal("the first certificate is not the one given")
	}
	for i := 1; i <= 2; i++ {
		prev := r.Current()
		if err := r.Renew(); err != nil {
			t.Fatal(err)
		}
		cur := r.Current()
		if r.Renewals() != int64(i) || cur.Leaf.Equal(prev.Leaf) || cur.Leaf.Subject.CommonName != "ccrm" {
			t.Fatalf("renewal %d: %d renewals, %q", i, r.Renewals(), cur.Leaf.Subject.CommonName)
		}
		if cur.Leaf.PublicKey.(*ecdsa.PublicKey).Equal(prev.Leaf.PublicKey) {
			t.Fatalf("renewal %d kept the key", i)
		}
	}
}
