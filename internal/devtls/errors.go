package devtls

import "errors"

// Sentinels; every error of this package wraps one of them.
var (
	// ErrInvalidName: a leaf name that is empty, reserved ("ca"), or not
	// made of letters, digits, '.', '-' and '_' (it names files).
	ErrInvalidName = errors.New("invalid certificate name")
	// ErrInvalidFile: a PEM file that does not hold what it should, or a
	// key that does not match its certificate.
	ErrInvalidFile = errors.New("invalid certificate or key file")
	// ErrNoPeerCertificate: a connection without a verified client or
	// server certificate (plain text, or TLS without mutual verification).
	ErrNoPeerCertificate = errors.New("no verified peer certificate")
)
