package devtls

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"math/big"
	"os"
	"path/filepath"
	"time"
)

// File names of the authority inside its directory.
const (
	CACertFile = "ca.crt"
	CAKeyFile  = "ca.key"
)

// caValidity is how long a new authority is valid.
const caValidity = 10 * 365 * 24 * time.Hour

// CA is a local certificate authority kept in a directory.
type CA struct {
	dir  string
	cert *x509.Certificate
	key  crypto.Signer
	pool *x509.CertPool
}

// OpenCA loads the authority kept in dir, creating dir (0700) and the
// authority when they do not exist yet.
func OpenCA(dir string) (*CA, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("devtls: creating %s: %w", dir, err)
	}
	unlock, err := lockDir(dir)
	if err != nil {
		return nil, err
	}
	defer unlock()

	certPath, keyPath := filepath.Join(dir, CACertFile), filepath.Join(dir, CAKeyFile)
	cert, key, err := readPair(certPath, keyPath)
	switch {
	case err == nil:
		if !cert.IsCA {
			return nil, fmt.Errorf("devtls: %s: %w: not a certificate authority", certPath, ErrInvalidFile)
		}
	case errors.Is(err, fs.ErrNotExist):
		if cert, key, err = createCA(certPath, keyPath); err != nil {
			return nil, err
		}
	default:
		return nil, err
	}
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	return &CA{dir: dir, cert: cert, key: key, pool: pool}, nil
}

// Dir is the directory the authority is kept in.
func (ca *CA) Dir() string { return ca.dir }

// Certificate is the authority's certificate.
func (ca *CA) Certificate() *x509.Certificate { return ca.cert }

// Pool is a pool holding only the authority, for verifying its leaves.
func (ca *CA) Pool() *x509.CertPool { return ca.pool }

// CertPath and KeyPath are the files of the leaf issued to name.
func (ca *CA) CertPath(name string) string { return filepath.Join(ca.dir, name+".crt") }

// KeyPath is the key file of the leaf issued to name.
func (ca *CA) KeyPath(name string) string { return filepath.Join(ca.dir, name+".key") }

// PairPath is the file holding both the certificate and the key of the
// leaf issued to name (PEM, 0600). It is replaced in one rename, so a
// reader that loads the certificate and the key from it (giving it as
// both files, as etcd's TLS does on each handshake) never gets a key that
// does not match the certificate, which reading CertPath and KeyPath while
// the leaf is issued again can.
func (ca *CA) PairPath(name string) string { return filepath.Join(ca.dir, name+".pem") }

func createCA(certPath, keyPath string) (*x509.Certificate, crypto.Signer, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, fmt.Errorf("devtls: generating CA key: %w", err)
	}
	serial, err := randomSerial()
	if err != nil {
		return nil, nil, err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: "edgekit development CA " + hex.EncodeToString(serial.Bytes()[:4]), Organization: []string{"edgekit"}},
		NotBefore:             now.Add(-time.Minute),
		NotAfter:              now.Add(caValidity),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
		MaxPathLenZero:        true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		return nil, nil, fmt.Errorf("devtls: creating CA certificate: %w", err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, nil, fmt.Errorf("devtls: parsing new CA certificate: %w", err)
	}
	if err := writePair(certPath, keyPath, der, key); err != nil {
		return nil, nil, err
	}
	return cert, key, nil
}

func randomSerial() (*big.Int, error) {
	s, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		return nil, fmt.Errorf("devtls: generating serial number: %w", err)
	}
	return s.Add(s, big.NewInt(1)), nil
}
