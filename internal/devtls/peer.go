package devtls

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net/http"
	"net/url"

	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/peer"
)

// Identity is who the peer of a verified connection is.
type Identity struct {
	// Name is the Common Name of the peer's certificate: the identity.
	Name string
	// URIs are the certificate's URI SANs.
	URIs []*url.URL
	// Certificate is the peer's verified leaf.
	Certificate *x509.Certificate
}

// PeerIdentity returns the identity of the peer of a TLS connection whose
// certificate was verified (a server requiring client certificates, or
// any client); ErrNoPeerCertificate otherwise, or when the certificate has
// no Common Name.
func PeerIdentity(cs *tls.ConnectionState) (Identity, error) {
	if cs == nil || len(cs.VerifiedChains) == 0 || len(cs.VerifiedChains[0]) == 0 {
		return Identity{}, ErrNoPeerCertificate
	}
	leaf := cs.VerifiedChains[0][0]
	if leaf.Subject.CommonName == "" {
		return Identity{}, fmt.Errorf("%w: certificate has no Common Name", ErrNoPeerCertificate)
	}
	return Identity{Name: leaf.Subject.CommonName, URIs: leaf.URIs, Certificate: leaf}, nil
}

// PeerFromRequest is PeerIdentity of the connection r came on.
func PeerFromRequest(r *http.Request) (Identity, error) {
	return PeerIdentity(r.TLS)
}

// PeerFromContext is PeerIdentity of the gRPC connection a call's context
// came on (server side, with transport credentials from ServerConfig).
func PeerFromContext(ctx context.Context) (Identity, error) {
	p, ok := peer.FromContext(ctx)
	if !ok {
		return Identity{}, fmt.Errorf("%w: no peer in context", ErrNoPeerCertificate)
	}
	info, ok := p.AuthInfo.(credentials.TLSInfo)
	if !ok {
		return Identity{}, fmt.Errorf("%w: connection is not TLS", ErrNoPeerCertificate)
	}
	return PeerIdentity(&info.State)
}
