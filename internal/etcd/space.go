package etcd

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"go.etcd.io/etcd/server/v3/storage/wal"
)

// DefaultQuotaBackendBytes is etcd's own database quota, which a member
// started with EmbedConfig.QuotaBackendBytes zero runs with.
const DefaultQuotaBackendBytes int64 = 2 << 30

// MinQuotaBackendBytes is the smallest quota StartEmbedded accepts: below
// it etcd's bookkeeping alone fills the database.
const MinQuotaBackendBytes int64 = 1 << 20

// SpaceError is StartEmbedded's refusal to start a member on a disk that
// cannot hold what the member will write: a new WAL segment (etcd
// preallocates them whole) and the database up to its quota. Without the
// check etcd panics while preallocating its WAL, or fills the disk before
// its own NOSPACE alarm can fire.
type SpaceError struct {
	// Dir is the member's data directory.
	Dir string
	// Free is the space available there, in bytes.
	Free int64
	// Need is what the member needs: WAL + Quota - DB.
	Need int64
	// WAL is the room for WAL segments, Quota the database quota and DB
	// the size of the database already there.
	WAL, Quota, DB int64
}

func (e *SpaceError) Error() string {
	return fmt.Sprintf("not enough free space in %s: %s free, %s needed (WAL segments %s + database quota %s - existing database %s); free space there or lower the database quota",
		e.Dir, FormatBytes(e.Free), FormatBytes(e.Need), FormatBytes(e.WAL), FormatBytes(e.Quota), FormatBytes(e.DB))
}

// checkSpace refuses a member whose data directory's file system cannot
// hold its WAL and its database up to the quota. A file system whose free
// space cannot be read passes.
func checkSpace(c EmbedConfig) error {
	quota := c.QuotaBackendBytes
	if quota == 0 {
		quota = DefaultQuotaBackendBytes
	}
	// A new member preallocates its first WAL segment and, in the
	// background, the next one; a member started again preallocates the
	// next one.
	walBytes := 2 * wal.SegmentSizeBytes
	if _, err := os.Stat(filepath.Join(c.DataDir, "member", "wal")); err == nil {
		walBytes = wal.SegmentSizeBytes
	}
	var dbBytes int64
	if fi, err := os.Stat(filepath.Join(c.DataDir, "member", "snap", "db")); err == nil {
		dbBytes = fi.Size()
	}
	need := walBytes + max(quota-dbBytes, 0)
	dir, err := existingDir(c.DataDir)
	if err != nil {
		return fmt.Errorf("embedded etcd %s: data directory: %w", c.Name, err)
	}
	free, ok, err := freeBytes(dir)
	if err != nil {
		return fmt.Errorf("embedded etcd %s: free space of %s: %w", c.Name, dir, err)
	}
	if ok && free < need {
		return &SpaceError{Dir: c.DataDir, Free: free, Need: need, WAL: walBytes, Quota: quota, DB: dbBytes}
	}
	return nil
}

// existingDir returns dir or its nearest existing ancestor: the file system
// the member's data will be on.
func existingDir(dir string) (string, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	for {
		_, err := os.Stat(dir)
		if err == nil {
			return dir, nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return "", err
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", err
		}
		dir = parent
	}
}

// FormatBytes writes n in the largest binary unit that keeps it at least 1
// ("512 B", "64 MiB", "2.5 GiB").
func FormatBytes(n int64) string {
	const unit = 1024
	if n < unit && n > -unit {
		return fmt.Sprintf("%d B", n)
	}
	f, i := float64(n), -1
	for (f >= unit || f <= -unit) && i < 5 {
		f /= unit
		i++
	}
	s := fmt.Sprintf("%.1f", f)
	if len(s) > 2 && s[len(s)-2:] == ".0" {
		s = s[:len(s)-2]
	}
	return s + " " + string("KMGTPE"[i]) + "iB"
}
