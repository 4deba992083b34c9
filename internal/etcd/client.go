package etcd

import (
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"go.etcd.io/etcd/client/pkg/v3/transport"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/edgekit/edgekit/internal/devtls"
)

// DefaultDialTimeout bounds the first connection of a client when
// ClientConfig.DialTimeout is zero.
const DefaultDialTimeout = 5 * time.Second

// ClientConfig says how to reach an etcd cluster.
type ClientConfig struct {
	// Endpoints are the client URLs of the cluster's members, such as
	// "https://10.0.0.1:2379" or "127.0.0.1:2379". At least one is needed.
	Endpoints []string
	// CAFile is a PEM file of the CAs that sign the members' certificates.
	// Setting it (or CertFile) turns TLS on.
	CAFile string
	// CertFile and KeyFile are the PEM client certificate and key presented
	// to members that require client certificates. Both or neither; the
	// same file for both (certificate and key in it, see
	// devtls.CA.PairPath) is read once per handshake, so replacing it by a
	// rename is safe while the client runs.
	CertFile, KeyFile string
	// DialTimeout bounds the first connection; zero means
	// DefaultDialTimeout.
	DialTimeout time.Duration
	// Logger receives the client's warnings and errors; nil discards them.
	Logger *slog.Logger
}

// TLS returns the client TLS configuration the files describe, or nil when
// no file is set.
func (c ClientConfig) TLS() (*tls.Config, error) {
	if c.CAFile == "" && c.CertFile == "" && c.KeyFile == "" {
		return nil, nil
	}
	if (c.CertFile == "") != (c.KeyFile == "") {
		return nil, errors.New("etcd client TLS: a certificate file and a key file go together; set both or neither")
	}
	info := transport.TLSInfo{CertFile: c.CertFile, KeyFile: c.KeyFile, TrustedCAFile: c.CAFile}
	cfg, err := info.ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("etcd client TLS: %w", err)
	}
	if c.CertFile != "" {
		// The files are read again on each handshake (as etcd's own
		// loader does, so a replaced certificate is taken up), through a
		// loader that never pairs a new key with an old certificate.
		certFile, keyFile := c.CertFile, c.KeyFile
		cfg.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) {
			cert, err := devtls.LoadKeyPair(certFile, keyFile)
			if err != nil {
				return nil, err
			}
			return &cert, nil
		}
	}
	return cfg, nil
}

// NewClient connects to the cluster c names. The client dials lazily in the
// background; a cluster that cannot be reached shows as errors (or context
// deadlines) on the first requests. The caller closes the client.
func NewClient(c ClientConfig) (*clientv3.Client, error) {
	if len(c.Endpoints) == 0 {
		return nil, errors.New("etcd client: no endpoints")
	}
	for _, ep := range c.Endpoints {
		if ep == "" {
			return nil, errors.New("etcd client: an empty endpoint")
		}
	}
	tlsCfg, err := c.TLS()
	if err != nil {
		return nil, err
	}
	dt := c.DialTimeout
	if dt <= 0 {
		dt = DefaultDialTimeout
	}
	cli, err := clientv3.New(clientv3.Config{
		Endpoints:   c.Endpoints,
		DialTimeout: dt,
		TLS:         tlsCfg,
		Logger:      zapLogger(c.Logger, "etcd-client"),
		// Keepalives notice a dead member so that the client moves to
		// another endpoint and resumes its watches there.
		DialKeepAliveTime:    10 * time.Second,
		DialKeepAliveTimeout: 5 * time.Second,
	})
	if err != nil {
		return nil, fmt.Errorf("etcd client for %v: %w", c.Endpoints, err)
	}
	return cli, nil
}
