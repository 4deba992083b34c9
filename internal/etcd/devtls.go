package etcd

import (
	"path/filepath"

	"github.com/edgekit/edgekit/internal/devtls"
)

// DevServerName is the name of the certificate an embedded member serves
// its clients with under a development authority.
const DevServerName = "etcd"

// DevClientCertName names the files of the etcd client certificate of user
// under a development authority. Its Common Name is user (the etcd user),
// but its files are its own: a host whose other certificate has the same
// Common Name (the controller's serving certificate, a FLUIDOS node's REAR
// certificate) renews that one with a shorter validity, and must not
// rewrite the files etcd reloads on each handshake.
func DevClientCertName(user string) string { return "etcd-client." + user }

// long is the validity of the leaves issued here: the member and its
// clients reload them from their files on each handshake but nothing
// renews them while they run, so they are issued for long and again only
// when they must be (close to expiry, another authority's).
func long(user string) devtls.LeafOptions {
	return devtls.LeafOptions{Validity: devtls.LongLeafValidity, CommonName: user}
}

// DevServerTLS issues (once) from the development authority ca the
// certificate a member serves clients with (named DevServerName) and the
// certificate of the member's own client (Common Name client, the etcd
// user, in the files of DevClientCertName(client)), and returns the TLS of
// a member that requires client certificates issued by ca. Each
// certificate is read from its pair file (devtls.CA.PairPath), written in
// one rename, so the member's per-handshake reloads never see a key that
// does not match the certificate.
func DevServerTLS(ca *devtls.CA, client string) (*ServerTLS, error) {
	if _, err := ca.Issue(DevServerName, long(DevServerName)); err != nil {
		return nil, err
	}
	name := DevClientCertName(client)
	if _, err := ca.Issue(name, long(client)); err != nil {
		return nil, err
	}
	return &ServerTLS{
		CertFile: ca.PairPath(DevServerName), KeyFile: ca.PairPath(DevServerName),
		TrustedCAFile: filepath.Join(ca.Dir(), devtls.CACertFile), ClientCertAuth: true,
		ClientCertFile: ca.PairPath(name), ClientKeyFile: ca.PairPath(name),
	}, nil
}

// DevClientConfig issues (once) from the development authority ca the
// etcd client certificate of user (Common Name user, in the files of
// DevClientCertName(user)) and returns what a client needs to reach
// endpoints as that etcd user; the certificate and key are both read from
// the pair file (see DevServerTLS).
func DevClientConfig(ca *devtls.CA, user string, endpoints []string) (ClientConfig, error) {
	name := DevClientCertName(user)
	if _, err := ca.Issue(name, long(user)); err != nil {
		return ClientConfig{}, err
	}
	return ClientConfig{Endpoints: endpoints, CAFile: filepath.Join(ca.Dir(), devtls.CACertFile),
		CertFile: ca.PairPath(name), KeyFile: ca.PairPath(name)}, nil
}
