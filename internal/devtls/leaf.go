package devtls

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/url"
	"regexp"
	"slices"
	"time"
)

// DefaultLeafValidity is how long a leaf is valid when LeafOptions does not
// say: a day, so that a leaked key is of use for a day at most. Hosts renew
// their own leaves before they expire (see Renewer).
const DefaultLeafValidity = 24 * time.Hour

// LongLeafValidity is the validity of leaves that are read from files by
// software that reloads them but does not renew them (the embedded etcd's).
const LongLeafValidity = 365 * 24 * time.Hour

// maxBackdate is how far before its issue a leaf's NotBefore is set, to
// tolerate clocks that lag; at most a tenth of the leaf's validity.
const maxBackdate = time.Minute

// LeafOptions adds to what every leaf carries.
type LeafOptions struct {
	// DNSNames are added to "localhost" (and the name, when it is a DNS
	// name) as DNS SANs.
	DNSNames []string
	// IPs are added to 127.0.0.1 and ::1 as IP SANs.
	IPs []net.IP
	// URIs are added as URI SANs.
	URIs []*url.URL
	// Validity of a newly issued leaf; DefaultLeafValidity when zero.
	Validity time.Duration
	// MinRemaining: a leaf on disk with less than this left before it
	// expires is issued again (besides one within a tenth of its
	// validity). Renewer sets it to half the validity.
	MinRemaining time.Duration
	// ReplaceLonger: a leaf on disk valid for longer than Validity from
	// now (issued before the validity was shortened) is issued again.
	// Renewer sets it, for the holder that renews the name; without it a
	// leaf that fits is kept whatever its validity, so that two callers
	// asking the same name with different validities do not rewrite its
	// files in turn.
	ReplaceLonger bool
	// CommonName is the leaf's Common Name (the identity peers see) when
	// it is not the name that names its files: two leaves of one identity
	// for different uses (a renewed serving certificate, a long-lived etcd
	// client certificate) live in files of their own.
	CommonName string
}

func (o LeafOptions) validity() time.Duration {
	if o.Validity <= 0 {
		return DefaultLeafValidity
	}
	return o.Validity
}

// commonName is the Common Name of the leaf whose files are named name.
func (o LeafOptions) commonName(name string) string {
	if o.CommonName != "" {
		return o.CommonName
	}
	return name
}

var (
	nameRE     = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9._-]{0,62}$`)
	fileNameRE = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9._-]{0,127}$`)
	dnsRE      = regexp.MustCompile(`^([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$`)
)

// ValidName reports whether name can name a leaf: 1 to 63 letters, digits,
// '.', '-' and '_', not starting with '.' or '-', and not "ca".
func ValidName(name string) error {
	if !nameRE.MatchString(name) || name == "ca" {
		return fmt.Errorf("devtls: %w: %q (want 1 to 63 of A-Z a-z 0-9 . - _, not starting with . or -, not \"ca\")", ErrInvalidName, name)
	}
	return nil
}

// Issue returns the leaf issued to name, issuing it when there is none yet
// or when the one on disk no longer fits (expired or close to it, issued by
// another authority, missing a name or address of opts, or, with
// opts.ReplaceLonger, valid for longer than asked). The leaf's Common Name
// is opts.CommonName, name when empty. Files are written only when the
// leaf is issued (and the pair file, PairPath, when it is missing or
// stale); each is replaced atomically.
func (ca *CA) Issue(name string, opts LeafOptions) (*Bundle, error) {
	if err := validLeafNames(name, opts); err != nil {
		return nil, err
	}
	cn := opts.commonName(name)
	unlock, err := lockDir(ca.dir)
	if err != nil {
		return nil, err
	}
	defer unlock()

	certPath, keyPath := ca.CertPath(name), ca.KeyPath(name)
	cert, key, err := readPair(certPath, keyPath)
	switch {
	case err == nil && ca.fits(cert, cn, opts):
		if err := ensurePairFile(ca.PairPath(name), cert, key); err != nil {
			return nil, err
		}
	case err == nil, errors.Is(err, fs.ErrNotExist):
		if cert, key, err = ca.issue(name, cn, opts); err != nil {
			return nil, err
		}
	default:
		return nil, err
	}
	return &Bundle{
		Certificate: tls.Certificate{Certificate: [][]byte{cert.Raw}, PrivateKey: key, Leaf: cert},
		Roots:       ca.pool,
	}, nil
}

// fits reports whether an existing leaf can be kept.
func (ca *CA) fits(cert *x509.Certificate, name string, opts LeafOptions) bool {
	now := time.Now()
	margin := max(cert.NotAfter.Sub(cert.NotBefore)/10, opts.MinRemaining)
	if cert.Subject.CommonName != name || now.Add(margin).After(cert.NotAfter) || now.Before(cert.NotBefore) {
		return false
	}
	// A leaf valid for longer than asked (issued before the validity was
	// shortened) is replaced by a shorter one, for a holder that asks.
	if opts.ReplaceLonger && cert.NotAfter.After(now.Add(opts.validity()+maxBackdate)) {
		return false
	}
	if _, err := cert.Verify(x509.VerifyOptions{Roots: ca.pool, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageAny}}); err != nil {
		return false
	}
	dns, ips := sans(name, opts)
	for _, d := range dns {
		if !slices.Contains(cert.DNSNames, d) {
			return false
		}
	}
	for _, ip := range ips {
		if !slices.ContainsFunc(cert.IPAddresses, ip.Equal) {
			return false
		}
	}
	for _, u := range opts.URIs {
		if !slices.ContainsFunc(cert.URIs, func(c *url.URL) bool { return c.String() == u.String() }) {
			return false
		}
	}
	return true
}

func sans(name string, opts LeafOptions) ([]string, []net.IP) {
	dns := []string{"localhost"}
	if dnsRE.MatchString(name) {
		dns = append(dns, name)
	}
	for _, d := range opts.DNSNames {
		if !slices.Contains(dns, d) {
			dns = append(dns, d)
		}
	}
	ips := append([]net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback}, opts.IPs...)
	return dns, ips
}

// validLeafNames checks the name of a leaf's files and its Common Name.
func validLeafNames(name string, opts LeafOptions) error {
	if opts.CommonName == "" {
		return ValidName(name)
	}
	if err := ValidName(opts.CommonName); err != nil {
		return err
	}
	if !fileNameRE.MatchString(name) || name == "ca" {
		return fmt.Errorf("devtls: %w: file name %q (want 1 to 128 of A-Z a-z 0-9 . - _, not starting with . or -, not \"ca\")", ErrInvalidName, name)
	}
	return nil
}

// issue issues a leaf of Common Name cn and writes it to the files of name.
func (ca *CA) issue(name, cn string, opts LeafOptions) (*x509.Certificate, crypto.Signer, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, fmt.Errorf("devtls: generating key of %s: %w", name, err)
	}
	serial, err := randomSerial()
	if err != nil {
		return nil, nil, err
	}
	validity := opts.validity()
	dns, ips := sans(cn, opts)
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: cn, Organization: []string{"edgekit"}},
		NotBefore:    now.Add(-min(maxBackdate, validity/10)),
		NotAfter:     now.Add(validity),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
		DNSNames:     dns,
		IPAddresses:  ips,
		URIs:         opts.URIs,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, key.Public(), ca.key)
	if err != nil {
		return nil, nil, fmt.Errorf("devtls: issuing certificate of %s: %w", name, err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, nil, fmt.Errorf("devtls: parsing certificate of %s: %w", name, err)
	}
	if err := ca.writeLeaf(name, der, key); err != nil {
		return nil, nil, err
	}
	return cert, key, nil
}
