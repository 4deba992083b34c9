// Package atrest encrypts values at rest with envelope encryption.
//
// An Envelope seals a value with AES-256-GCM under a data key, and the data
// key is wrapped (encrypted) by a key-encryption key that a KeyProvider
// holds: a local key file (FileKeyring) or, behind the same two-method
// interface, an external KMS. A sealed value carries everything needed to
// open it but the key-encryption key itself:
//
//	magic "\x00eks" | version 1 | key id length | key id |
//	wrapped data key length (2 bytes, big endian) | wrapped data key |
//	nonce (12 bytes) | ciphertext and GCM tag
//
// The caller's associated data (the store gives the value's etcd key) and
// the header are authenticated with the ciphertext, so a value moved to
// another key, or with any byte changed, does not open.
//
// One data key is made per key-encryption key and process, wrapped once
// and cached (the way Kubernetes' KMS v2 plugin does), so that sealing a
// value costs one AES-GCM operation and no call to the provider; it is
// replaced after MaxSealsPerDataKey values, far below the limit of random
// 96-bit nonces. Unwrapped data keys met while opening values are cached
// too, by their wrapped bytes.
package atrest

import (
	"bytes"
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"sync"
	"time"
)

// KeyProvider holds key-encryption keys: it wraps data keys with its
// current key and unwraps data keys wrapped by any key it still has.
// FileKeyring is the local implementation; a KMS client (Vault transit,
// a cloud KMS) implements the same two methods. It must be safe for
// concurrent use.
type KeyProvider interface {
	// WrapKey encrypts dek with the current key-encryption key and
	// returns that key's id (at most 255 bytes) with the wrapped bytes.
	WrapKey(ctx context.Context, dek []byte) (keyID string, wrapped []byte, err error)
	// UnwrapKey decrypts a data key that key keyID wrapped. A key the
	// provider does not have is an error matching ErrUnknownKey.
	UnwrapKey(ctx context.Context, keyID string, wrapped []byte) ([]byte, error)
}

// Errors of the package; the errors returned match them (errors.Is).
var (
	// ErrUnknownKey: the key-encryption key a value names is not held.
	ErrUnknownKey = errors.New("unknown key-encryption key")
	// ErrUndecryptable: a sealed value does not open (wrong key, moved to
	// another key, or changed).
	ErrUndecryptable = errors.New("cannot decrypt the stored value")
	// ErrMalformed: a value starts like a sealed one but its header is
	// cut short or of an unknown version.
	ErrMalformed = errors.New("malformed sealed value")
)

// magic starts every sealed value. A protojson value starts with '{', so
// a legacy plaintext value is never taken for a sealed one.
const magic = "\x00eks"

// formatVersion is the version of the sealed format.
const formatVersion = 1

const (
	dataKeySize = 32 // AES-256
	nonceSize   = 12
)

// MaxSealsPerDataKey is how many values one cached data key seals before
// a new one is made.
const MaxSealsPerDataKey = 1 << 30

// providerTimeout bounds one call to the KeyProvider.
const providerTimeout = 30 * time.Second

// maxCachedKeys bounds the cache of unwrapped data keys.
const maxCachedKeys = 4096

// IsSealed reports whether b is a sealed value (starts with the magic).
func IsSealed(b []byte) bool { return bytes.HasPrefix(b, []byte(magic)) }

// header is the parsed header of a sealed value.
type header struct {
	keyID   string
	wrapped []byte
	n       int // header length
}

func parseHeader(b []byte) (header, error) {
	if !IsSealed(b) {
		return header{}, fmt.Errorf("%w: no magic", ErrMalformed)
	}
	p := len(magic)
	if len(b) < p+2 {
		return header{}, fmt.Errorf("%w: cut short", ErrMalformed)
	}
	if b[p] != formatVersion {
		return header{}, fmt.Errorf("%w: format version %d (this build reads %d)", ErrMalformed, b[p], formatVersion)
	}
	idLen := int(b[p+1])
	p += 2
	if len(b) < p+idLen+2 {
		return header{}, fmt.Errorf("%w: cut short", ErrMalformed)
	}
	h := header{keyID: string(b[p : p+idLen])}
	p += idLen
	wLen := int(binary.BigEndian.Uint16(b[p:]))
	p += 2
	if len(b) < p+wLen+nonceSize {
		return header{}, fmt.Errorf("%w: cut short", ErrMalformed)
	}
	h.wrapped = b[p : p+wLen]
	h.n = p + wLen
	return h, nil
}

// KeyIDOf returns the id of the key-encryption key that sealed b.
func KeyIDOf(b []byte) (string, error) {
	h, err := parseHeader(b)
	return h.keyID, err
}

// Option configures an Envelope.
type Option func(*Envelope)

// DataKeyPerValue makes the Envelope wrap a fresh data key for every value
// instead of caching one per key-encryption key: one provider call per
// write (and per read of a value not read before). For measurement and
// for providers that forbid reusing a data key.
func DataKeyPerValue() Option { return func(e *Envelope) { e.perValue = true } }

// Envelope seals and opens values. It is safe for concurrent use.
type Envelope struct {
	kp       KeyProvider
	perValue bool

	mu    sync.Mutex
	cur   *dataKey
	cache map[string]cachedKey // by wrapped bytes
}

type cachedKey struct {
	keyID string
	aead  cipher.AEAD
}

type dataKey struct {
	header  []byte // the sealed values' header up to the nonce
	keyID   string
	wrapped []byte
	aead    cipher.AEAD
	seals   int
}

// NewEnvelope returns an Envelope over kp.
func NewEnvelope(kp KeyProvider, opts ...Option) *Envelope {
	e := &Envelope{kp: kp, cache: map[string]cachedKey{}}
	for _, o := range opts {
		o(e)
	}
	return e
}

// Provider returns the envelope's key provider.
func (e *Envelope) Provider() KeyProvider { return e.kp }

func newAEAD(key []byte) (cipher.AEAD, error) {
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	return cipher.NewGCM(block)
}

// newDataKey makes and wraps a random data key.
func (e *Envelope) newDataKey() (*dataKey, error) {
	dek := make([]byte, dataKeySize)
	if _, err := rand.Read(dek); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), providerTimeout)
	defer cancel()
	id, wrapped, err := e.kp.WrapKey(ctx, dek)
	if err != nil {
		return nil, fmt.Errorf("atrest: wrapping a data key: %w", err)
	}
	if len(id) > 255 || len(wrapped) > 0xffff {
		return nil, fmt.Errorf("atrest: the key provider gave a key id of %d bytes (at most 255) or a wrapped key of %d (at most 65535)", len(id), len(wrapped))
	}
	aead, err := newAEAD(dek)
	if err != nil {
		return nil, err
	}
	h := make([]byte, 0, len(magic)+4+len(id)+len(wrapped))
	h = append(h, magic...)
	h = append(h, formatVersion, byte(len(id)))
	h = append(h, id...)
	h = binary.BigEndian.AppendUint16(h, uint16(len(wrapped)))
	h = append(h, wrapped...)
	return &dataKey{header: h, keyID: id, wrapped: wrapped, aead: aead}, nil
}

// current returns the data key to seal with, making one when needed.
func (e *Envelope) current() (*dataKey, error) {
	if e.perValue {
		return e.newDataKey()
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.cur == nil || e.cur.seals >= MaxSealsPerDataKey {
		dk, err := e.newDataKey()
		if err != nil {
			return nil, err
		}
		e.cur = dk
		e.remember(dk.keyID, dk.wrapped, dk.aead)
	}
	e.cur.seals++
	return e.cur, nil
}

// remember caches an unwrapped data key; e.mu is held.
func (e *Envelope) remember(keyID string, wrapped []byte, aead cipher.AEAD) {
	if len(e.cache) >= maxCachedKeys {
		clear(e.cache)
	}
	e.cache[string(wrapped)] = cachedKey{keyID: keyID, aead: aead}
}

// CurrentKeyID returns the id of the key-encryption key values are sealed
// with now.
func (e *Envelope) CurrentKeyID() (string, error) {
	if e.perValue {
		dk, err := e.newDataKey()
		if err != nil {
			return "", err
		}
		return dk.keyID, nil
	}
	dk, err := e.current()
	if err != nil {
		return "", err
	}
	return dk.keyID, nil
}

// Seal encrypts plaintext bound to aad (the store gives the value's key):
// the value opens only with the same aad.
func (e *Envelope) Seal(plaintext, aad []byte) ([]byte, error) {
	dk, err := e.current()
	if err != nil {
		return nil, err
	}
	out := make([]byte, len(dk.header), len(dk.header)+nonceSize+len(plaintext)+dk.aead.Overhead())
	copy(out, dk.header)
	nonce := out[len(out) : len(out)+nonceSize]
	if _, err := rand.Read(nonce); err != nil {
		return nil, err
	}
	out = out[:len(out)+nonceSize]
	return dk.aead.Seal(out, nonce, plaintext, additional(dk.header, aad)), nil
}

// additional is the associated data of a value: its header and the
// caller's aad.
func additional(header, aad []byte) []byte {
	ad := make([]byte, 0, len(header)+len(aad))
	return append(append(ad, header...), aad...)
}

// Open decrypts a sealed value bound to aad. A value that does not open
// is an error matching ErrUndecryptable (and ErrUnknownKey when its
// key-encryption key is not held); one with a bad header matches
// ErrMalformed.
func (e *Envelope) Open(sealed, aad []byte) ([]byte, error) {
	h, err := parseHeader(sealed)
	if err != nil {
		return nil, err
	}
	aead, err := e.unwrap(h)
	if err != nil {
		return nil, err
	}
	nonce := sealed[h.n : h.n+nonceSize]
	pt, err := aead.Open(nil, nonce, sealed[h.n+nonceSize:], additional(sealed[:h.n], aad))
	if err != nil {
		return nil, fmt.Errorf("%w (key-encryption key %q): the value was changed or moved from another key", ErrUndecryptable, h.keyID)
	}
	return pt, nil
}

// unwrap returns the data key of a header, from the cache or the provider.
func (e *Envelope) unwrap(h header) (cipher.AEAD, error) {
	e.mu.Lock()
	ck, ok := e.cache[string(h.wrapped)]
	e.mu.Unlock()
	if ok && ck.keyID == h.keyID {
		return ck.aead, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), providerTimeout)
	defer cancel()
	dek, err := e.kp.UnwrapKey(ctx, h.keyID, h.wrapped)
	if err != nil {
		return nil, fmt.Errorf("%w: data key of key-encryption key %q: %w", ErrUndecryptable, h.keyID, err)
	}
	aead, err := newAEAD(dek)
	if err != nil {
		return nil, fmt.Errorf("%w: data key of key-encryption key %q: %w", ErrUndecryptable, h.keyID, err)
	}
	if !e.perValue {
		e.mu.Lock()
		e.remember(h.keyID, h.wrapped, aead)
		e.mu.Unlock()
	}
	return aead, nil
}
