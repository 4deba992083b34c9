package local

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// Files at the top of the state directory.
const (
	// lockFileName is locked (flock, exclusive) by a platform while New
	// prepares the directory (creates its key), and holds the pid and
	// program name of the last platform that did.
	lockFileName = "lock"
	// keyFileName holds the directory's random key: 32 bytes, hex.
	keyFileName = "key"
)

// prepareRoot creates what every platform over root shares, under the
// exclusive lock of root's lock file, held only for that: the directory
// of the objects' lock files and the directory's key (removing the
// temporary file of a key creation a kill interrupted). It returns the
// key. The lock belongs to an open file, so a platform killed while it
// holds it never leaves it behind.
func prepareRoot(root string) ([]byte, error) {
	f, err := os.OpenFile(filepath.Join(root, lockFileName), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("%w: lock file of %s: %w", ErrInvalidConfig, root, err)
	}
	defer f.Close()
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
		if err == nil {
			break
		}
		if !errors.Is(err, syscall.EINTR) {
			return nil, fmt.Errorf("%w: locking %s: %w", ErrInvalidConfig, root, err)
		}
	}
	self := "pid " + strconv.Itoa(os.Getpid())
	if exe, err := os.Executable(); err == nil {
		self += " (" + filepath.Base(exe) + ")"
	}
	if err := f.Truncate(0); err == nil {
		_, _ = f.WriteAt([]byte(self+"\n"), 0)
	}
	if err := os.MkdirAll(filepath.Join(root, locksDir), 0o700); err != nil {
		return nil, fmt.Errorf("%w: Root %q: %w", ErrInvalidConfig, root, err)
	}
	// Nobody else writes the key while the lock is held: a temporary key
	// file is the leftover of a kill while the key was created.
	if _, err := removeTemps(root, "", keyFileName); err != nil {
		return nil, fmt.Errorf("%w: removing a temporary key file of %s: %w", ErrInvalidConfig, root, err)
	}
	return loadKey(root)
}

// loadKey returns the state directory's key, creating it on first use. The
// caller holds the directory's lock (see prepareRoot), so no other
// platform creates it concurrently.
func loadKey(root string) ([]byte, error) {
	path := filepath.Join(root, keyFileName)
	b, err := os.ReadFile(path)
	if err == nil {
		key, derr := hex.DecodeString(strings.TrimSpace(string(b)))
		if derr != nil || len(key) != 32 {
			return nil, fmt.Errorf("%w: %s of %s is not 32 hex-encoded bytes", ErrInvalidConfig, keyFileName, root)
		}
		return key, nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%w: reading %s of %s: %w", ErrInvalidConfig, keyFileName, root, err)
	}
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		return nil, fmt.Errorf("%w: generating a key: %w", ErrInvalidConfig, err)
	}
	if err := writeFileAtomic(path, []byte(hex.EncodeToString(key)+"\n")); err != nil {
		return nil, fmt.Errorf("%w: writing %s of %s: %w", ErrInvalidConfig, keyFileName, root, err)
	}
	return key, nil
}

// mac is HMAC-SHA256 of msg under key, hex-encoded.
func mac(key []byte, msg string) string {
	h := hmac.New(sha256.New, key)
	h.Write([]byte(msg))
	return hex.EncodeToString(h.Sum(nil))
}

// rootID derives the public identity of a state directory from its key:
// the prefix of every marker its processes carry. It reveals nothing of
// the key.
func rootID(key []byte) string { return mac(key, "edgekit-local process marker")[:32] }

// newLaunchID returns a random identifier of one start of a process.
func newLaunchID() (string, error) {
	b := make([]byte, 12)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("%w: generating a launch id: %w", ErrStart, err)
	}
	return hex.EncodeToString(b), nil
}

// writeFileAtomic writes b to path through a temporary file, fsync and
// rename, readable by the owner only.
func writeFileAtomic(path string, b []byte) error {
	return writeFileVia(path, b, "", nil)
}

// writeFileVia is writeFileAtomic with the temporary file named
// tempPrefix(path) + tag + "." + random (tag "" for none), and written
// calls between the write of the temporary file and its rename (a test
// hook; nil for none).
func writeFileVia(path string, b []byte, tag string, written func()) error {
	pattern := tempPrefix(path) + "*"
	if tag != "" {
		pattern = tempPrefix(path) + tag + ".*"
	}
	f, err := os.CreateTemp(filepath.Dir(path), pattern)
	if err != nil {
		return err
	}
	tmp := f.Name()
	_, werr := f.Write(b)
	if werr == nil {
		werr = f.Sync()
	}
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil && written != nil {
		written()
	}
	if werr == nil {
		werr = os.Rename(tmp, path)
	}
	if werr != nil {
		_ = os.Remove(tmp)
	}
	return werr
}

// tempPrefix is how the name of every temporary file written for path
// starts (".cluster.json.tmp" for cluster.json), whichever version of the
// platform wrote it.
func tempPrefix(path string) string { return "." + filepath.Base(path) + ".tmp" }

// removeTemps removes the temporary files left for the files named in
// names of dir by writes that never reached their rename (a kill between
// the two), keeping those whose name carries keep (the writes in progress
// of the platform that calls it; "" keeps none). It returns the names it
// removed and the first error other than a file already gone.
func removeTemps(dir string, keep string, names ...string) ([]string, error) {
	ents, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var removed []string
	var first error
	for _, e := range ents {
		if e.IsDir() {
			continue
		}
		for _, n := range names {
			pre := tempPrefix(n)
			if !strings.HasPrefix(e.Name(), pre) || (keep != "" && strings.HasPrefix(e.Name(), pre+keep+".")) {
				continue
			}
			if err := os.Remove(filepath.Join(dir, e.Name())); err != nil && !errors.Is(err, fs.ErrNotExist) {
				if first == nil {
					first = err
				}
				continue
			}
			removed = append(removed, e.Name())
		}
	}
	return removed, first
}
