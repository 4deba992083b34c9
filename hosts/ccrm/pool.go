package ccrm

import "crypto/x509"

// newPool returns a pool of the PEM certificates, or nil when there is
// none.
func newPool(pem []byte) *x509.CertPool {
	p := x509.NewCertPool()
	if !p.AppendCertsFromPEM(pem) {
		return nil
	}
	return p
}
