package atrest

import (
	"bufio"
	"bytes"
	"context"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
)

// DefaultKeyFileName is the key file's name under a host's data directory.
const DefaultKeyFileName = "encryption.keys"

// keyFileHeader starts a key file the package writes.
const keyFileHeader = `# edgekit key-encryption keys: "<id> <base64 of 32 random bytes>" a line.
# The first key encrypts; every key listed decrypts. Keep this file secret
# (mode 0600) and back it up apart from etcd's snapshots.
`

// FileKeyring is the local KeyProvider: key-encryption keys read from a
// file of lines "<id> <base64 of 32 bytes>", the first being the current
// key (the one that wraps). Lines starting with '#' are comments.
//
// When asked to unwrap with a key it does not have, it reads the file
// again if it changed since last read, so that a process keeps reading values that another one
// (the rewrap command) sealed with a key added to the file after it
// started. The current key is the file's first when it was last read.
type FileKeyring struct {
	path string

	mu     sync.RWMutex
	ids    []string // in file order; ids[0] is current
	aeads  map[string]cipher.AEAD
	loaded os.FileInfo // of the file as last read
}

var _ KeyProvider = (*FileKeyring)(nil)

// OpenKeyFile reads the key file at path. A file readable or writable by
// other users than its owner is refused: it holds the keys to every
// secret.
func OpenKeyFile(path string) (*FileKeyring, error) {
	k := &FileKeyring{path: path}
	if err := k.reload(); err != nil {
		return nil, err
	}
	return k, nil
}

// EnsureKeyFile opens the key file at path, creating it (mode 0600, with
// one new key) when it does not exist; created tells which.
func EnsureKeyFile(path string) (k *FileKeyring, created bool, err error) {
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		id, key, err := newKey()
		if err != nil {
			return nil, false, err
		}
		if err := writeKeyFile(path, []keyLine{{id, key}}, true); err != nil {
			if !errors.Is(err, os.ErrExist) { // another process made it first
				return nil, false, err
			}
		} else {
			created = true
		}
	}
	k, err = OpenKeyFile(path)
	return k, created, err
}

// Path returns the key file's path.
func (k *FileKeyring) Path() string { return k.path }

// KeyIDs returns the ids of the keys, the current one first.
func (k *FileKeyring) KeyIDs() []string {
	k.mu.RLock()
	defer k.mu.RUnlock()
	return slices.Clone(k.ids)
}

// WrapKey wraps dek with the current key (AES-256-GCM, the key id as
// associated data).
func (k *FileKeyring) WrapKey(_ context.Context, dek []byte) (string, []byte, error) {
	k.mu.RLock()
	id := k.ids[0]
	aead := k.aeads[id]
	k.mu.RUnlock()
	nonce := make([]byte, nonceSize, nonceSize+len(dek)+aead.Overhead())
	if _, err := rand.Read(nonce); err != nil {
		return "", nil, err
	}
	return id, aead.Seal(nonce, nonce, dek, []byte(id)), nil
}

// UnwrapKey unwraps a data key wrapped by key id, reading the file again
// when it does not hold id.
func (k *FileKeyring) UnwrapKey(_ context.Context, id string, wrapped []byte) ([]byte, error) {
	k.mu.RLock()
	aead, ok := k.aeads[id]
	k.mu.RUnlock()
	if !ok {
		fi, err := os.Stat(k.path)
		if err != nil {
			return nil, fmt.Errorf("key file: %w", err)
		}
		k.mu.RLock()
		same := k.loaded != nil && os.SameFile(fi, k.loaded) && fi.ModTime().Equal(k.loaded.ModTime()) && fi.Size() == k.loaded.Size()
		k.mu.RUnlock()
		if !same {
			if err := k.reload(); err != nil {
				return nil, err
			}
		}
		k.mu.RLock()
		aead, ok = k.aeads[id]
		k.mu.RUnlock()
		if !ok {
			return nil, fmt.Errorf("%w %q: not in key file %s", ErrUnknownKey, id, k.path)
		}
	}
	if len(wrapped) < nonceSize {
		return nil, fmt.Errorf("wrapped data key of %d bytes: too short", len(wrapped))
	}
	dek, err := aead.Open(nil, wrapped[:nonceSize], wrapped[nonceSize:], []byte(id))
	if err != nil {
		return nil, fmt.Errorf("key %q of %s does not unwrap the data key: %w", id, k.path, err)
	}
	return dek, nil
}

// reload reads the file.
func (k *FileKeyring) reload() error {
	fi, err := os.Stat(k.path)
	if err != nil {
		return fmt.Errorf("key file: %w", err)
	}
	lines, err := readKeyFile(k.path)
	if err != nil {
		return err
	}
	aeads := make(map[string]cipher.AEAD, len(lines))
	ids := make([]string, 0, len(lines))
	for _, l := range lines {
		a, err := newAEAD(l.key)
		if err != nil {
			return fmt.Errorf("key file %s: key %q: %w", k.path, l.id, err)
		}
		aeads[l.id] = a
		ids = append(ids, l.id)
	}
	k.mu.Lock()
	k.ids, k.aeads, k.loaded = ids, aeads, fi
	k.mu.Unlock()
	return nil
}

type keyLine struct {
	id  string
	key []byte
}

// readKeyFile parses a key file, refusing one that others may read.
func readKeyFile(path string) ([]keyLine, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("key file: %w", err)
	}
	if fi.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf("key file %s: mode %v lets other users read it; chmod 600 it", path, fi.Mode().Perm())
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("key file: %w", err)
	}
	var lines []keyLine
	seen := map[string]bool{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Fields(line)
		if len(f) != 2 {
			return nil, fmt.Errorf("key file %s:%d: want \"<id> <base64 key>\"", path, n)
		}
		if err := checkKeyID(f[0]); err != nil {
			return nil, fmt.Errorf("key file %s:%d: %w", path, n, err)
		}
		if seen[f[0]] {
			return nil, fmt.Errorf("key file %s:%d: key id %q appears twice", path, n, f[0])
		}
		seen[f[0]] = true
		key, err := base64.StdEncoding.DecodeString(f[1])
		if err != nil || len(key) != dataKeySize {
			return nil, fmt.Errorf("key file %s:%d: key %q: want the base64 of %d bytes", path, n, f[0], dataKeySize)
		}
		lines = append(lines, keyLine{f[0], key})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("key file %s: %w", path, err)
	}
	if len(lines) == 0 {
		return nil, fmt.Errorf("key file %s holds no key", path)
	}
	return lines, nil
}

func checkKeyID(id string) error {
	if id == "" || len(id) > 128 {
		return fmt.Errorf("key id %q: want 1 to 128 characters", id)
	}
	for _, r := range id {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.') {
			return fmt.Errorf("key id %q: want letters, digits, '-', '_' or '.'", id)
		}
	}
	return nil
}

// newKey makes a random key and its id (the time and random bits).
func newKey() (string, []byte, error) {
	key := make([]byte, dataKeySize)
	if _, err := rand.Read(key); err != nil {
		return "", nil, err
	}
	var r [3]byte
	if _, err := rand.Read(r[:]); err != nil {
		return "", nil, err
	}
	return "k" + time.Now().UTC().Format("20060102T150405Z") + "-" + hex.EncodeToString(r[:]), key, nil
}

// writeKeyFile writes lines to path atomically (a temporary file renamed),
// mode 0600. With exclusive, an existing file is an error matching
// os.ErrExist.
func writeKeyFile(path string, lines []keyLine, exclusive bool) error {
	var b strings.Builder
	b.WriteString(keyFileHeader)
	for _, l := range lines {
		fmt.Fprintf(&b, "%s %s\n", l.id, base64.StdEncoding.EncodeToString(l.key))
	}
	if exclusive {
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if err != nil {
			return err
		}
		if _, err := f.WriteString(b.String()); err != nil {
			f.Close()
			os.Remove(path)
			return err
		}
		if err := f.Sync(); err != nil {
			f.Close()
			return err
		}
		return f.Close()
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".keys-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return err
	}
	if _, err := tmp.WriteString(b.String()); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// AddKey adds a new random key to the key file at path, first, so that it
// becomes the current key of every process that reads the file from then
// on; the others keep decrypting. It returns the new key's id.
func AddKey(path string) (string, error) {
	lines, err := readKeyFile(path)
	if err != nil {
		return "", err
	}
	id, key, err := newKey()
	if err != nil {
		return "", err
	}
	if err := writeKeyFile(path, append([]keyLine{{id, key}}, lines...), false); err != nil {
		return "", fmt.Errorf("key file %s: %w", path, err)
	}
	return id, nil
}

// RemoveKey removes key id from the key file at path. The current key
// (the first) cannot be removed; check first that no stored value uses
// id (the store's KeyUsage), or those values cannot be read any more.
func RemoveKey(path, id string) error {
	lines, err := readKeyFile(path)
	if err != nil {
		return err
	}
	i := slices.IndexFunc(lines, func(l keyLine) bool { return l.id == id })
	switch {
	case i < 0:
		return fmt.Errorf("key file %s has no key %q", path, id)
	case i == 0:
		return fmt.Errorf("key %q is the current key of %s: add a new key and rewrap first", id, path)
	}
	if err := writeKeyFile(path, slices.Delete(lines, i, i+1), false); err != nil {
		return fmt.Errorf("key file %s: %w", path, err)
	}
	return nil
}

// HostKeys returns the envelope of a host process: over kp when given (an
// external KMS), else over the key file at file, else over
// dataDir/DefaultKeyFileName, created (0600, one new key) on first start.
// With neither kp, file nor dataDir it returns nil: the host stores and
// reads no encrypted value. keyFile names the file used, or "".
func HostKeys(kp KeyProvider, file, dataDir string) (env *Envelope, keyFile string, err error) {
	switch {
	case kp != nil:
		return NewEnvelope(kp), "", nil
	case file != "":
		k, err := OpenKeyFile(file)
		if err != nil {
			return nil, "", err
		}
		return NewEnvelope(k), file, nil
	case dataDir != "":
		path := filepath.Join(dataDir, DefaultKeyFileName)
		k, _, err := EnsureKeyFile(path)
		if err != nil {
			return nil, "", err
		}
		return NewEnvelope(k), path, nil
	}
	return nil, "", nil
}
