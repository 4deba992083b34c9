//go:build unix

package etcd

import "golang.org/x/sys/unix"

// freeBytes returns the space available to this process on the file
// system of dir.
func freeBytes(dir string) (free int64, ok bool, err error) {
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		return 0, false, err
	}
	return int64(st.Bavail) * int64(st.Bsize), true, nil //nolint:unconvert // Bsize is not int64 everywhere
}
