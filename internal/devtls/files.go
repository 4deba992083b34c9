package devtls

import (
	"bytes"
	"crypto"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// lockDir takes an exclusive advisory lock on dir, held until the returned
// function is called.
func lockDir(dir string) (unlock func(), err error) {
	f, err := os.OpenFile(filepath.Join(dir, ".lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("devtls: locking %s: %w", dir, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("devtls: locking %s: %w", dir, err)
	}
	return func() {
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		_ = f.Close()
	}, nil
}

// readPair reads a certificate and its private key. A missing file is an
// error matching fs.ErrNotExist.
func readPair(certPath, keyPath string) (*x509.Certificate, crypto.Signer, error) {
	certPEM, err := os.ReadFile(certPath)
	if err != nil {
		return nil, nil, err
	}
	keyPEM, err := os.ReadFile(keyPath)
	if err != nil {
		return nil, nil, err
	}
	cert, err := parseCertPEM(certPath, certPEM)
	if err != nil {
		return nil, nil, err
	}
	block, _ := pem.Decode(keyPEM)
	if block == nil {
		return nil, nil, fmt.Errorf("devtls: %s: %w: no PEM block", keyPath, ErrInvalidFile)
	}
	k, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	if err != nil {
		return nil, nil, fmt.Errorf("devtls: %s: %w: %w", keyPath, ErrInvalidFile, err)
	}
	key, ok := k.(crypto.Signer)
	if !ok {
		return nil, nil, fmt.Errorf("devtls: %s: %w: %T is not a signing key", keyPath, ErrInvalidFile, k)
	}
	if !publicKeyEqual(cert.PublicKey, key.Public()) {
		return nil, nil, fmt.Errorf("devtls: %s: %w: key does not match %s", keyPath, ErrInvalidFile, certPath)
	}
	return cert, key, nil
}

func publicKeyEqual(a, b crypto.PublicKey) bool {
	ka, ok := a.(interface{ Equal(crypto.PublicKey) bool })
	return ok && ka.Equal(b)
}

func parseCertPEM(path string, data []byte) (*x509.Certificate, error) {
	block, _ := pem.Decode(data)
	if block == nil || block.Type != "CERTIFICATE" {
		return nil, fmt.Errorf("devtls: %s: %w: no CERTIFICATE PEM block", path, ErrInvalidFile)
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		return nil, fmt.Errorf("devtls: %s: %w: %w", path, ErrInvalidFile, err)
	}
	return cert, nil
}

// writePair writes a certificate (0644) and its key (0600), each through a
// temporary file renamed into place, key first.
func writePair(certPath, keyPath string, der []byte, key crypto.Signer) error {
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return fmt.Errorf("devtls: encoding key: %w", err)
	}
	if err := writeFileAtomic(keyPath, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		return err
	}
	return writeFileAtomic(certPath, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644)
}

// writeLeaf writes a leaf of the authority to its three files: key,
// certificate and pair file, each replaced atomically. The caller holds
// the directory lock.
func (ca *CA) writeLeaf(name string, der []byte, key crypto.Signer) error {
	if err := writePair(ca.CertPath(name), ca.KeyPath(name), der, key); err != nil {
		return err
	}
	return writePairFile(ca.PairPath(name), der, key)
}

// writePairFile writes the certificate and its key to one file, replaced
// atomically.
func writePairFile(path string, der []byte, key crypto.Signer) error {
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return fmt.Errorf("devtls: encoding key: %w", err)
	}
	data := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	data = append(data, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER})...)
	return writeFileAtomic(path, data, 0o600)
}

// ensurePairFile writes the pair file of a leaf kept on disk when it does
// not hold that leaf (made before pair files were, or lost).
func ensurePairFile(path string, cert *x509.Certificate, key crypto.Signer) error {
	if data, err := os.ReadFile(path); err == nil {
		if block, _ := pem.Decode(data); block != nil && block.Type == "CERTIFICATE" && bytes.Equal(block.Bytes, cert.Raw) {
			return nil
		}
	}
	return writePairFile(path, cert.Raw, key)
}

func writeFileAtomic(path string, data []byte, mode os.FileMode) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return fmt.Errorf("devtls: writing %s: %w", path, err)
	}
	defer os.Remove(tmp.Name()) // no-op after the rename
	if err := tmp.Chmod(mode); err != nil {
		_ = tmp.Close()
		return fmt.Errorf("devtls: writing %s: %w", path, err)
	}
	if _, err := tmp.Write(data); err != nil {
		_ = tmp.Close()
		return fmt.Errorf("devtls: writing %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("devtls: writing %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("devtls: writing %s: %w", path, err)
	}
	return nil
}

// pairAttempts bounds how often LoadKeyPair reads separate files again.
const pairAttempts = 5

// LoadKeyPair loads a certificate and its key (PEM) as tls.LoadX509KeyPair
// does, from files that may be replaced while it reads them. A pair file
// (the same path given twice, see CA.PairPath) is read once, so a
// replacement by rename gives the old pair or the new one, never a mix.
// Separate files, replaced one after the other, can be caught in between
// (the new key, the old certificate): they are read again, a few times at
// most, until the key matches the certificate. Files that never match are
// an error matching ErrInvalidFile; a missing file one matching
// fs.ErrNotExist.
func LoadKeyPair(certFile, keyFile string) (tls.Certificate, error) {
	if certFile == keyFile {
		data, err := os.ReadFile(certFile)
		if err != nil {
			return tls.Certificate{}, fmt.Errorf("devtls: %w", err)
		}
		c, err := tls.X509KeyPair(data, data)
		if err != nil {
			return tls.Certificate{}, fmt.Errorf("devtls: loading %s: %w: %w", certFile, ErrInvalidFile, err)
		}
		return c, nil
	}
	var err error
	for attempt := range pairAttempts {
		if attempt > 0 {
			time.Sleep(time.Duration(attempt) * 10 * time.Millisecond)
		}
		var c tls.Certificate
		if c, err = tls.LoadX509KeyPair(certFile, keyFile); err == nil {
			return c, nil
		}
		if errors.Is(err, fs.ErrNotExist) {
			return tls.Certificate{}, fmt.Errorf("devtls: %w", err)
		}
	}
	return tls.Certificate{}, fmt.Errorf("devtls: loading %s and %s: %w: %w", certFile, keyFile, ErrInvalidFile, err)
}
