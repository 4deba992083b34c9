package allocator

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

// imageName is what the name of an image of the catalog looks like.
var imageName = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]{0,62}$`)

// catalog is the node's images: executables by name, the only programs a
// slice's buyer or a blueprint runs.
type catalog map[string]string

// newCatalog checks images: each name is 1 to 63 of a-z 0-9 . _ -, each
// path an absolute path to an executable regular file.
func newCatalog(images map[string]string) (catalog, error) {
	c := catalog{}
	for name, path := range images {
		if !imageName.MatchString(name) {
			return nil, fmt.Errorf("image name %q: want 1 to 63 of a-z 0-9 . _ -, starting with a letter or digit", name)
		}
		if !filepath.IsAbs(path) {
			return nil, fmt.Errorf("image %s: %q is not an absolute path", name, path)
		}
		fi, err := os.Stat(path)
		if err != nil {
			return nil, fmt.Errorf("image %s: %w", name, err)
		}
		if !fi.Mode().IsRegular() || fi.Mode().Perm()&0o111 == 0 {
			return nil, fmt.Errorf("image %s: %s is not an executable file", name, path)
		}
		c[name] = filepath.Clean(path)
	}
	return c, nil
}

// path is the executable of image name.
func (c catalog) path(name string) (string, error) {
	if p, ok := c[name]; ok {
		return p, nil
	}
	if len(c) == 0 {
		return "", fmt.Errorf("image %q: this node's catalog of images is empty", name)
	}
	return "", fmt.Errorf("image %q is not in this node's catalog (%s)", name, strings.Join(c.names(), ", "))
}

// has reports whether path is the executable of an image.
func (c catalog) has(path string) bool {
	for _, p := range c {
		if p == path {
			return true
		}
	}
	return false
}

func (c catalog) names() []string {
	out := make([]string, 0, len(c))
	for n := range c {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}
