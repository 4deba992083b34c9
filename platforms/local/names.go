package local

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/executor"
)

// Reservation kinds the platform uses.
const (
	// KindPortRange is the reservation kind of a cluster's port range; the
	// value is "first-last", the owner the cluster.
	KindPortRange = "port-range"
	// KindPort is the reservation kind of one port of an application
	// instance, inside its cluster's range; the value is the port number.
	KindPort = executor.ReservePort
)

// errNeverCreatable marks a key the platform could never have created
// anything for (an empty name): deleting it succeeds at once.
var errNeverCreatable = errors.New("key has no name")

// maxDirName is the longest directory name made from a key (NAME_MAX of
// common filesystems). A longer escaped name is replaced by a hash of it.
const maxDirName = 255

// hashedPrefix starts a directory name that is a hash of the escaped name
// (which escaping never produces, so the two kinds never collide).
const hashedPrefix = "~"

// escapeName maps a key component to a file name component: letters,
// digits and '-' stay, every other byte becomes '_' and two hex digits. An
// empty component becomes a lone '_', which escaping never produces.
func escapeName(s string) string {
	if s == "" {
		return "_"
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if c := s[i]; plain(c) {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, "_%02x", c)
		}
	}
	return b.String()
}

// plain reports whether escapeName keeps c as it is.
func plain(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-'
}

// unescapeName reverses escapeName; ok is false for a string escapeName
// cannot have produced.
func unescapeName(s string) (string, bool) {
	if s == "_" {
		return "", true
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case plain(c):
			b.WriteByte(c)
		case c == '_' && i+2 < len(s):
			v, err := strconv.ParseUint(s[i+1:i+3], 16, 8)
			if err != nil {
				return "", false
			}
			b.WriteByte(byte(v))
			i += 2
		default:
			return "", false
		}
	}
	// Only what escapeName produces: lower-case hex, nothing escaped that
	// need not be.
	return b.String(), escapeName(b.String()) == s
}

// dirName joins the escaped organization and name with '.', which escaping
// never produces, so distinct keys map to distinct names. A name longer
// than maxDirName becomes "~" and the SHA-256 of the escaped name.
func dirName(org, name string) string {
	n := escapeName(org) + "." + escapeName(name)
	if len(n) > maxDirName {
		sum := sha256.Sum256([]byte(n))
		return hashedPrefix + hex.EncodeToString(sum[:])
	}
	return n
}

// parseDirName returns the organization and name a directory name was
// made from; ok is false for a hashed name or one dirName cannot make.
func parseDirName(n string) (org, name string, ok bool) {
	a, b, cut := strings.Cut(n, ".")
	if !cut || strings.HasPrefix(n, hashedPrefix) {
		return "", "", false
	}
	org, ok1 := unescapeName(a)
	name, ok2 := unescapeName(b)
	return org, name, ok1 && ok2
}

// shortName renders org/name for errors and logs, cut so that a huge key
// never ends up whole in a report.
func shortName(org, name string) string {
	const max = 64
	s := org + "/" + name
	if len(s) <= max {
		return s
	}
	return fmt.Sprintf("%s... (%d bytes)", s[:max], len(s))
}

// cloudletID is the name of the cloudlet's reservation table.
func cloudletID(k *edgeproto.CloudletKey) string {
	if k == nil {
		k = &edgeproto.CloudletKey{}
	}
	return executor.CloudletName(k)
}

func cloudletDirName(k *edgeproto.CloudletKey) (string, error) {
	if k.GetName() == "" {
		return "", fmt.Errorf("%w: cloudlet %w", ErrInvalidObject, errNeverCreatable)
	}
	return dirName(k.GetOrganization(), k.GetName()), nil
}

func clusterDirName(k *edgeproto.ClusterKey) (string, error) {
	if k.GetName() == "" {
		return "", fmt.Errorf("%w: cluster %w", ErrInvalidObject, errNeverCreatable)
	}
	return dirName(k.GetOrganization(), k.GetName()), nil
}

func appDirName(k *edgeproto.AppInstKey) (string, error) {
	if k.GetName() == "" {
		return "", fmt.Errorf("%w: application instance %w", ErrInvalidObject, errNeverCreatable)
	}
	return dirName(k.GetOrganization(), k.GetName()), nil
}

// clusterOwner is the reservation owner of a cluster's port range.
func clusterOwner(k *edgeproto.ClusterKey) string {
	return executor.OwnerOf(&edgeproto.ClusterInst{Key: k})
}

// appOwner is the reservation owner of an application instance's ports.
func appOwner(k *edgeproto.AppInstKey) string {
	return executor.OwnerOf(&edgeproto.AppInst{Key: k})
}

func clusterString(k *edgeproto.ClusterKey) string {
	return shortName(k.GetOrganization(), k.GetName())
}

func appInstString(k *edgeproto.AppInstKey) string {
	return shortName(k.GetOrganization(), k.GetName())
}
