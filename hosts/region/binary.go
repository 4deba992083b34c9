package region

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// install copies the program at src to dst (mode 0755) unless dst holds
// the same bytes already, through a rename so that processes running the
// old copy keep it. up runs every process of the region from dst: a path
// that outlives "go run"'s temporary build, and that the tour's
// application (dst serve) can be started from again by the next up.
func install(src, dst string) (changed bool, err error) {
	same, err := sameContent(src, dst)
	if err != nil || same {
		return false, err
	}
	in, err := os.Open(src)
	if err != nil {
		return false, fmt.Errorf("region: %w", err)
	}
	defer in.Close()
	tmp, err := os.CreateTemp(filepath.Dir(dst), ".edgekit-*")
	if err != nil {
		return false, fmt.Errorf("region: %w", err)
	}
	defer os.Remove(tmp.Name()) // a no-op after the rename
	if _, err := io.Copy(tmp, in); err != nil {
		tmp.Close()
		return false, fmt.Errorf("region: copying %s: %w", src, err)
	}
	if err := tmp.Chmod(0o755); err != nil {
		tmp.Close()
		return false, fmt.Errorf("region: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return false, fmt.Errorf("region: %w", err)
	}
	if err := os.Rename(tmp.Name(), dst); err != nil {
		return false, fmt.Errorf("region: %w", err)
	}
	return true, nil
}

// sameContent reports whether the files hold the same bytes; a missing dst
// is not the same.
func sameContent(src, dst string) (bool, error) {
	si, err := os.Stat(src)
	if err != nil {
		return false, fmt.Errorf("region: %w", err)
	}
	di, err := os.Stat(dst)
	if err != nil || di.Size() != si.Size() {
		return false, nil
	}
	a, err := digest(src)
	if err != nil {
		return false, err
	}
	b, err := digest(dst)
	if err != nil {
		return false, nil
	}
	return bytes.Equal(a, b), nil
}

func digest(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("region: %w", err)
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return nil, fmt.Errorf("region: %w", err)
	}
	return h.Sum(nil), nil
}

// link makes dst a hard link of src (the same executable under another
// name, for a multi-call binary that looks at the name it runs under),
// replacing what dst was.
func link(src, dst string) error {
	si, err := os.Stat(src)
	if err != nil {
		return fmt.Errorf("region: %w", err)
	}
	if di, err := os.Stat(dst); err == nil && os.SameFile(si, di) {
		return nil
	}
	if err := os.Remove(dst); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("region: %w", err)
	}
	if err := os.Link(src, dst); err != nil {
		return fmt.Errorf("region: %w", err)
	}
	return nil
}
