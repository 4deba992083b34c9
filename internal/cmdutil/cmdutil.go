// Package cmdutil holds what the hosts' command lines share: the logger
// their --log-format and --log-level flags choose, the client TLS
// configuration their --tls-* flags describe, the ready file their
// --ready-file flag names, and the signal handling and exit codes of a
// MainFunc run as a program (Run, Exit).
package cmdutil

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"log/slog"
	"os"
)

// NewLogger returns a logger writing to w in format ("text" or "json") at
// level ("debug", "info", "warn" or "error"); anything else is an error
// naming the flag.
func NewLogger(w io.Writer, format, level string) (*slog.Logger, error) {
	var lv slog.Level
	if err := lv.UnmarshalText([]byte(level)); err != nil {
		return nil, fmt.Errorf("--log-level: %w", err)
	}
	opts := &slog.HandlerOptions{Level: lv}
	switch format {
	case "text":
		return slog.New(slog.NewTextHandler(w, opts)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(w, opts)), nil
	}
	return nil, fmt.Errorf("--log-format %q: want text or json", format)
}

// ClientTLS describes the TLS of a client connection from PEM files.
type ClientTLS struct {
	// CAFile holds the authorities the server's certificate must chain to;
	// "" uses the system's.
	CAFile string
	// CertFile and KeyFile are the client's certificate and key, for
	// mutual TLS; both or neither.
	CertFile, KeyFile string
	// ServerName overrides the name the server's certificate must carry.
	ServerName string
}

// Enabled reports whether any TLS setting was given.
func (c ClientTLS) Enabled() bool {
	return c.CAFile != "" || c.CertFile != "" || c.KeyFile != "" || c.ServerName != ""
}

// Config builds the TLS configuration (TLS 1.2 at least).
func (c ClientTLS) Config() (*tls.Config, error) {
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: c.ServerName}
	if c.CAFile != "" {
		pem, err := os.ReadFile(c.CAFile)
		if err != nil {
			return nil, fmt.Errorf("--tls-ca-file: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("--tls-ca-file %s: no PEM certificate in it", c.CAFile)
		}
		cfg.RootCAs = pool
	}
	if (c.CertFile == "") != (c.KeyFile == "") {
		return nil, fmt.Errorf("--tls-cert-file and --tls-key-file go together")
	}
	if c.CertFile != "" {
		cert, err := tls.LoadX509KeyPair(c.CertFile, c.KeyFile)
		if err != nil {
			return nil, fmt.Errorf("--tls-cert-file/--tls-key-file: %w", err)
		}
		cfg.Certificates = []tls.Certificate{cert}
	}
	return cfg, nil
}
