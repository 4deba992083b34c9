package devtls

import (
	"bytes"
	"context"
	"crypto"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"
)

// DefaultPollInterval is how often a Renewer over files looks at them.
const DefaultPollInterval = 10 * time.Second

// Renewer holds a party's current certificate and replaces it before it
// expires, so that a long-running process never presents an expired one:
// TLS configurations take it through GetCertificate or
// GetClientCertificate (see Bundle), so every new handshake gets the
// current certificate while connections made before go on untouched.
//
// A Renewer over a development authority (CA.Renewer) issues the name's
// leaf again once two thirds of the time it had left when obtained have
// passed; one over files (FileRenewer) reloads them when they change.
// Start runs the schedule; Renew renews at once.
type Renewer struct {
	name  string
	fetch func(minRemaining time.Duration) (tls.Certificate, error)
	// due is the part of what was left at which the schedule renews.
	due float64
	// poll, when positive, looks again at this interval (files).
	poll time.Duration
	// certFile and keyFile are the files of a FileRenewer.
	certFile, keyFile string
	// schedule renews at two thirds of what was left (an authority).
	schedule bool
	log      *slog.Logger

	// persist, when set, receives each renewed certificate (files).
	persist func(tls.Certificate) error

	mu       sync.Mutex // serializes fetches
	cur      atomic.Pointer[current]
	renewals atomic.Int64
}

type current struct {
	cert     *tls.Certificate
	obtained time.Time
}

// Renewer returns a Renewer of the leaf issued to name with opts (issued
// or loaded now). Processes given the same directory and name share the
// leaf: one renewing it renews it for all, and each loads the newest.
func (ca *CA) Renewer(name string, opts LeafOptions, log *slog.Logger) (*Renewer, error) {
	opts.MinRemaining = max(opts.MinRemaining, opts.validity()/2)
	// The holder renews the name: a leaf longer than it asks is replaced.
	opts.ReplaceLonger = true
	fetch := func(minRemaining time.Duration) (tls.Certificate, error) {
		o := opts
		o.MinRemaining = max(o.MinRemaining, minRemaining)
		b, err := ca.Issue(name, o)
		if err != nil {
			return tls.Certificate{}, err
		}
		return b.Certificate, nil
	}
	return newRenewer(name, fetch, 0, true, log)
}

// FileRenewer returns a Renewer of the certificate and key in certFile and
// keyFile (PEM), loaded now and again whenever their content changes,
// looked at every poll (DefaultPollInterval when zero). A change that does
// not load (a key that does not match, a half-written file) is logged and
// the previous certificate kept until the files load.
func FileRenewer(certFile, keyFile string, poll time.Duration, log *slog.Logger) (*Renewer, error) {
	if poll <= 0 {
		poll = DefaultPollInterval
	}
	fetch := func(time.Duration) (tls.Certificate, error) {
		return LoadKeyPair(certFile, keyFile)
	}
	r, err := newRenewer(certFile, fetch, poll, false, log)
	if err != nil {
		return nil, err
	}
	r.certFile, r.keyFile = certFile, keyFile
	return r, nil
}

// Files are the certificate and key files of a FileRenewer, or "".
func (r *Renewer) Files() (certFile, keyFile string) { return r.certFile, r.keyFile }

// PersistTo has each certificate r renews from now on written to certFile
// and keyFile (PEM; the key 0600, PKCS#8), each replaced atomically, so a
// restarted process starts from the newest. A failed write fails the
// renewal. Call it before Start.
func (r *Renewer) PersistTo(certFile, keyFile string) {
	r.persist = func(c tls.Certificate) error {
		key, ok := c.PrivateKey.(crypto.Signer)
		if !ok {
			return fmt.Errorf("devtls: %T is not a signing key", c.PrivateKey)
		}
		return writePair(certFile, keyFile, c.Certificate[0], key)
	}
}

func newRenewer(name string, fetch func(time.Duration) (tls.Certificate, error), poll time.Duration, schedule bool, log *slog.Logger) (*Renewer, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	r := &Renewer{name: name, fetch: fetch, poll: poll, schedule: schedule, due: 2.0 / 3, log: log}
	if _, err := r.refresh(0); err != nil {
		return nil, err
	}
	return r, nil
}

// Current is the certificate to present now (Leaf set).
func (r *Renewer) Current() *tls.Certificate { return r.cur.Load().cert }

// Renewals counts the certificates that replaced the first one.
func (r *Renewer) Renewals() int64 { return r.renewals.Load() }

// GetCertificate is for tls.Config.GetCertificate.
func (r *Renewer) GetCertificate(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	return r.Current(), nil
}

// GetClientCertificate is for tls.Config.GetClientCertificate.
func (r *Renewer) GetClientCertificate(*tls.CertificateRequestInfo) (*tls.Certificate, error) {
	return r.Current(), nil
}

// SetDue sets when the schedule of a Renewer over an authority renews: at
// this part (0 to 1) of the time its certificate had left when obtained;
// 2/3 by default. Call it before Start.
func (r *Renewer) SetDue(part float64) {
	if part > 0 && part < 1 {
		r.due = part
	}
}

// Renew obtains the certificate again now (from an authority: the newest
// leaf of the name, issued again when less than half its validity is
// left) and makes it current when it differs.
func (r *Renewer) Renew() error {
	_, err := r.refresh(0)
	return err
}

// RenewExpiringBefore renews when the current certificate expires before
// t: from an authority it gets a leaf of the name valid past t (the newest
// one, or a new one); it reports whether the certificate changed. A
// certificate that already outlives t is kept.
func (r *Renewer) RenewExpiringBefore(t time.Time) (bool, error) {
	if !r.Current().Leaf.NotAfter.Before(t) {
		return false, nil
	}
	return r.refresh(time.Until(t) + time.Second)
}

// refresh fetches the certificate and makes it current when it is another
// one; it reports whether it was.
func (r *Renewer) refresh(minRemaining time.Duration) (bool, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	c, err := r.fetch(minRemaining)
	if err != nil {
		return false, err
	}
	if c.Leaf == nil {
		if c.Leaf, err = x509.ParseCertificate(c.Certificate[0]); err != nil {
			return false, fmt.Errorf("devtls: %s: %w: %w", r.name, ErrInvalidFile, err)
		}
	}
	old := r.cur.Load()
	if old != nil && bytes.Equal(old.cert.Leaf.Raw, c.Leaf.Raw) {
		return false, nil
	}
	if old != nil && r.persist != nil {
		if err := r.persist(c); err != nil {
			return false, err
		}
	}
	r.cur.Store(&current{cert: &c, obtained: time.Now()})
	if old != nil {
		r.renewals.Add(1)
		r.log.Info("certificate renewed", slog.String("name", r.name), slog.String("subject", c.Leaf.Subject.CommonName),
			slog.Time("not_after", c.Leaf.NotAfter))
	}
	return true, nil
}

// next is when to look again at the certificate.
func (r *Renewer) next(now time.Time) time.Time {
	cur := r.cur.Load()
	at := now.Add(r.poll)
	if r.schedule {
		left := cur.cert.Leaf.NotAfter.Sub(cur.obtained)
		at = cur.obtained.Add(time.Duration(float64(left) * r.due))
		if r.poll > 0 && now.Add(r.poll).Before(at) {
			at = now.Add(r.poll)
		}
	}
	return at
}

// retryAfter is how long to wait after a failed renewal: a tenth of what
// is left of the current certificate, between 100ms and a minute; ten
// seconds once it has expired.
func (r *Renewer) retryAfter(now time.Time) time.Duration {
	left := r.Current().Leaf.NotAfter.Sub(now)
	if left <= 0 {
		return 10 * time.Second
	}
	return min(max(left/10, 100*time.Millisecond), time.Minute)
}

// Start renews on schedule until ctx ends; it returns
// nil then. A failed renewal is logged and retried; the current
// certificate stays in use meanwhile.
func (r *Renewer) Start(ctx context.Context) error {
	wait := time.Until(r.next(time.Now()))
	for {
		t := time.NewTimer(max(wait, 0))
		select {
		case <-ctx.Done():
			t.Stop()
			return nil
		case <-t.C:
		}
		if _, err := r.refresh(0); err != nil {
			wait = r.retryAfter(time.Now())
			lvl := slog.LevelWarn
			if errors.Is(err, ErrInvalidFile) && !r.schedule {
				lvl = slog.LevelError
			}
			r.log.Log(ctx, lvl, "renewing the certificate failed; keeping the current one", slog.String("name", r.name),
				slog.Time("not_after", r.Current().Leaf.NotAfter), slog.Any("err", err))
			continue
		}
		now := time.Now()
		if wait = r.next(now).Sub(now); wait <= 0 {
			// Nothing newer yet (files not changed, another process's
			// leaf not yet due): look again a little later.
			wait = r.retryAfter(now)
		}
	}
}

// Bundle is a Bundle presenting the Renewer's current certificate, trusting
// roots.
func (r *Renewer) Bundle(roots *x509.CertPool) *Bundle {
	return &Bundle{Certificate: *r.Current(), Roots: roots, renewer: r}
}
