package devtls

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"log/slog"
	"os"
	"time"
)

// Bundle is what one party needs for mutual TLS: its certificate and the
// authorities it trusts for its peers.
type Bundle struct {
	// Certificate is the party's chain and key (Leaf set).
	Certificate tls.Certificate
	// Roots are the authorities peers' certificates must chain to.
	Roots *x509.CertPool

	renewer *Renewer
}

// Renewer is the Renewer of a bundle made by Renewer.Bundle, or nil: a
// bundle without one presents Certificate for ever. Run its Start for the
// certificate to be renewed.
func (b *Bundle) Renewer() *Renewer { return b.renewer }

// current is the certificate to present now.
func (b *Bundle) current() *tls.Certificate {
	if b.renewer != nil {
		return b.renewer.Current()
	}
	return &b.Certificate
}

// LoadBundle reads a certificate and key (PEM, the key PKCS#8) and a file of
// one or more trusted authority certificates (PEM). A key that does not
// match the certificate, or a CA file without certificates, is an error
// matching ErrInvalidFile.
func LoadBundle(certFile, keyFile, caFile string) (*Bundle, error) {
	cert, err := LoadKeyPair(certFile, keyFile)
	if err != nil {
		return nil, err
	}
	caPEM, err := os.ReadFile(caFile)
	if err != nil {
		return nil, fmt.Errorf("devtls: reading %s: %w", caFile, err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(caPEM) {
		return nil, fmt.Errorf("devtls: %s: %w: no CERTIFICATE PEM block", caFile, ErrInvalidFile)
	}
	return &Bundle{Certificate: cert, Roots: pool}, nil
}

// LoadRenewingBundle is LoadBundle whose certificate is reloaded from
// certFile and keyFile when they change (see FileRenewer); run the
// bundle's Renewer().Start for the reloading to happen.
func LoadRenewingBundle(certFile, keyFile, caFile string, poll time.Duration, log *slog.Logger) (*Bundle, error) {
	b, err := LoadBundle(certFile, keyFile, caFile)
	if err != nil {
		return nil, err
	}
	r, err := FileRenewer(certFile, keyFile, poll, log)
	if err != nil {
		return nil, err
	}
	return r.Bundle(b.Roots), nil
}

// Name is the Common Name of the bundle's certificate: the identity peers
// see.
func (b *Bundle) Name() string {
	c := b.current()
	if c.Leaf == nil {
		return ""
	}
	return c.Leaf.Subject.CommonName
}

// ServerConfig is a server configuration presenting the bundle's
// certificate and requiring a client certificate that chains to Roots. A
// bundle with a Renewer presents its current certificate on each
// handshake.
func (b *Bundle) ServerConfig() *tls.Config {
	cfg := &tls.Config{
		MinVersion: tls.VersionTLS13,
		ClientAuth: tls.RequireAndVerifyClientCert,
		ClientCAs:  b.Roots,
	}
	if b.renewer != nil {
		cfg.GetCertificate = b.renewer.GetCertificate
	} else {
		cfg.Certificates = []tls.Certificate{b.Certificate}
	}
	return cfg
}

// ClientConfig is a client configuration presenting the bundle's
// certificate and verifying the server's against Roots (and the name or
// address dialled against its SANs). A bundle with a Renewer presents its
// current certificate on each handshake.
func (b *Bundle) ClientConfig() *tls.Config {
	cfg := &tls.Config{
		MinVersion: tls.VersionTLS13,
		RootCAs:    b.Roots,
	}
	if b.renewer != nil {
		cfg.GetClientCertificate = b.renewer.GetClientCertificate
	} else {
		cfg.Certificates = []tls.Certificate{b.Certificate}
	}
	return cfg
}
