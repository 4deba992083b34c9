package devtls

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"fmt"
	"log/slog"
	"time"
)

// ErrNotOwnIdentity: a renewal request for another identity than the one
// of the certificate it comes with.
var ErrNotOwnIdentity = errors.New("a party renews only its own certificate")

// RenewFor issues, for a party whose current certificate is current (the
// verified peer certificate of its connection), a new leaf for the key of
// csrDER (a PKCS#10 request, DER): the same Common Name and subject
// alternative names as current, valid for validity (DefaultLeafValidity
// when zero). The request must name that Common Name (ErrNotOwnIdentity
// otherwise), be signed by its key, and current must be a leaf of this
// authority valid now. Nothing is written to the authority's directory.
func (ca *CA) RenewFor(current *x509.Certificate, csrDER []byte, validity time.Duration) (*x509.Certificate, error) {
	if current == nil {
		return nil, ErrNoPeerCertificate
	}
	if _, err := current.Verify(x509.VerifyOptions{Roots: ca.pool, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageAny}}); err != nil {
		return nil, fmt.Errorf("devtls: the current certificate of %q: %w", current.Subject.CommonName, err)
	}
	name := current.Subject.CommonName
	if err := ValidName(name); err != nil {
		return nil, err
	}
	csr, err := x509.ParseCertificateRequest(csrDER)
	if err != nil {
		return nil, fmt.Errorf("devtls: certificate request of %q: %w: %w", name, ErrInvalidFile, err)
	}
	if err := csr.CheckSignature(); err != nil {
		return nil, fmt.Errorf("devtls: certificate request of %q: %w: %w", name, ErrInvalidFile, err)
	}
	if csr.Subject.CommonName != name {
		return nil, fmt.Errorf("devtls: %w: the certificate names %q, the request %q", ErrNotOwnIdentity, name, csr.Subject.CommonName)
	}
	serial, err := randomSerial()
	if err != nil {
		return nil, err
	}
	if validity <= 0 {
		validity = DefaultLeafValidity
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: name, Organization: []string{"edgekit"}},
		NotBefore:    now.Add(-min(maxBackdate, validity/10)),
		NotAfter:     now.Add(validity),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
		DNSNames:     current.DNSNames,
		IPAddresses:  current.IPAddresses,
		URIs:         current.URIs,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, csr.PublicKey, ca.key)
	if err != nil {
		return nil, fmt.Errorf("devtls: renewing the certificate of %q: %w", name, err)
	}
	return x509.ParseCertificate(der)
}

// RemoteRenewer returns a Renewer that starts with initial (Leaf set or
// parsed) and renews it by asking renew (the authority's holder, over a
// connection that presents the current certificate) to sign a request for
// a new key under the same Common Name; the key never leaves the process.
// It renews at two thirds of the time the certificate had left.
func RemoteRenewer(initial tls.Certificate, renew func(ctx context.Context, csrDER []byte) (certDER []byte, err error), log *slog.Logger) (*Renewer, error) {
	if len(initial.Certificate) == 0 {
		return nil, fmt.Errorf("devtls: %w: no certificate to renew", ErrInvalidFile)
	}
	if initial.Leaf == nil {
		leaf, err := x509.ParseCertificate(initial.Certificate[0])
		if err != nil {
			return nil, fmt.Errorf("devtls: %w: %w", ErrInvalidFile, err)
		}
		initial.Leaf = leaf
	}
	name := initial.Leaf.Subject.CommonName
	first := true
	fetch := func(time.Duration) (tls.Certificate, error) {
		if first {
			first = false
			return initial, nil
		}
		key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			return tls.Certificate{}, fmt.Errorf("devtls: generating a key for %q: %w", name, err)
		}
		csr, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{Subject: pkix.Name{CommonName: name}}, key)
		if err != nil {
			return tls.Certificate{}, fmt.Errorf("devtls: certificate request of %q: %w", name, err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		der, err := renew(ctx, csr)
		if err != nil {
			return tls.Certificate{}, fmt.Errorf("devtls: renewing %q: %w", name, err)
		}
		leaf, err := x509.ParseCertificate(der)
		if err != nil {
			return tls.Certificate{}, fmt.Errorf("devtls: renewed certificate of %q: %w: %w", name, ErrInvalidFile, err)
		}
		if leaf.Subject.CommonName != name || !publicKeyEqual(leaf.PublicKey, key.Public()) {
			return tls.Certificate{}, fmt.Errorf("devtls: renewed certificate of %q: %w: names %q or is for another key", name, ErrInvalidFile, leaf.Subject.CommonName)
		}
		return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}, nil
	}
	return newRenewer(name, fetch, 0, true, log)
}
