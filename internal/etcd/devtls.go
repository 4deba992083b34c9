package etcd

import (
	"path/filepath"

	"github.com/edgekit/edgekit/internal/devtls"
)

// long is the validity of the leaves issued here when absent: the member
// and its clients reload them from their files on each handshake but do
// not renew them; a host whose own certificate has the same name (the
// controller's, a CCRM's, a node's) renews it, and so these files, with
// its shorter validity.
var long = devtls.LeafOptions{Validity: devtls.LongLeafValidity}

// DevServerName is the name of the certificate an embedded member serves
// its clients with under a development authority.
const DevServerName = "etcd"

// DevServerTLS issues (once) from the development authority ca the
// certificate a member serves clients with (named DevServerName) and the
// certificate of the member's own client (named client, the Common Name
// that is its etcd user), and returns the TLS of a member that requires
// client certificates issued by ca.
func DevServerTLS(ca *devtls.CA, client string) (*ServerTLS, error) {
	if _, err := ca.Issue(DevServerName, long); err != nil {
		return nil, err
	}
	if _, err := ca.Issue(client, long); err != nil {
		return nil, err
	}
	return &ServerTLS{
		CertFile: ca.CertPath(DevServerName), KeyFile: ca.KeyPath(DevServerName),
		TrustedCAFile: filepath.Join(ca.Dir(), devtls.CACertFile), ClientCertAuth: true,
		ClientCertFile: ca.CertPath(client), ClientKeyFile: ca.KeyPath(client),
	}, nil
}

// DevClientConfig issues (once) from the development authority ca the
// certificate of user and returns what a client needs to reach endpoints
// as that etcd user.
func DevClientConfig(ca *devtls.CA, user string, endpoints []string) (ClientConfig, error) {
	if _, err := ca.Issue(user, long); err != nil {
		return ClientConfig{}, err
	}
	return ClientConfig{Endpoints: endpoints, CAFile: filepath.Join(ca.Dir(), devtls.CACertFile),
		CertFile: ca.CertPath(user), KeyFile: ca.KeyPath(user)}, nil
}
