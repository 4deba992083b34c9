package devtls

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"os"
)

// Bundle is what one party needs for mutual TLS: its certificate and the
// authorities it trusts for its peers.
type Bundle struct {
	// Certificate is the party's chain and key (Leaf set).
	Certificate tls.Certificate
	// Roots are the authorities peers' certificates must chain to.
	Roots *x509.CertPool
}

// LoadBundle reads a certificate and key (PEM, the key PKCS#8) and a file of
// one or more trusted authority certificates (PEM). A key that does not
// match the certificate, or a CA file without certificates, is an error
// matching ErrInvalidFile.
func LoadBundle(certFile, keyFile, caFile string) (*Bundle, error) {
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return nil, fmt.Errorf("devtls: loading %s and %s: %w: %w", certFile, keyFile, ErrInvalidFile, err)
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

// Name is the Common Name of the bundle's certificate: the identity peers
// see.
func (b *Bundle) Name() string {
	if b.Certificate.Leaf == nil {
		return ""
	}
	return b.Certificate.Leaf.Subject.CommonName
}

// ServerConfig is a server configuration presenting the bundle's
// certificate and requiring a client certificate that chains to Roots.
func (b *Bundle) ServerConfig() *tls.Config {
	return &tls.Config{
		MinVersion:   tls.VersionTLS13,
		Certificates: []tls.Certificate{b.Certificate},
		ClientAuth:   tls.RequireAndVerifyClientCert,
		ClientCAs:    b.Roots,
	}
}

// ClientConfig is a client configuration presenting the bundle's
// certificate and verifying the server's against Roots (and the name or
// address dialled against its SANs).
func (b *Bundle) ClientConfig() *tls.Config {
	return &tls.Config{
		MinVersion:   tls.VersionTLS13,
		Certificates: []tls.Certificate{b.Certificate},
		RootCAs:      b.Roots,
	}
}
