package local

import (
	"fmt"
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

// maxDirName bounds a directory name made from a key; longer keys are
// refused rather than truncated, so two keys never share a directory.
const maxDirName = 200

// escapeName maps a key component to a file name component: letters,
// digits and '-' stay, every other byte becomes '_' and two hex digits. An
// empty component becomes a lone '_', which escaping never produces.
func escapeName(s string) string {
	if s == "" {
		return "_"
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '-':
			b.WriteByte(c)
		default:
			fmt.Fprintf(&b, "_%02x", c)
		}
	}
	return b.String()
}

// dirName joins the escaped parts with '.', which escaping never produces,
// so distinct keys map to distinct names.
func dirName(parts ...string) (string, error) {
	esc := make([]string, len(parts))
	for i, p := range parts {
		esc[i] = escapeName(p)
	}
	n := strings.Join(esc, ".")
	if len(n) > maxDirName {
		return "", fmt.Errorf("%w: key %q is too long for a directory name", ErrInvalidObject, strings.Join(parts, "/"))
	}
	return n, nil
}

// cloudletID is the name of the cloudlet's reservation table.
func cloudletID(k *edgeproto.CloudletKey) string {
	if k == nil {
		k = &edgeproto.CloudletKey{}
	}
	return executor.CloudletName(k)
}

func cloudletDirName(k *edgeproto.CloudletKey) (string, error) {
	return dirName(k.GetOrganization(), k.GetName())
}

func clusterDirName(k *edgeproto.ClusterKey) (string, error) {
	if k.GetName() == "" {
		return "", fmt.Errorf("%w: cluster key has no name", ErrInvalidObject)
	}
	return dirName(k.GetOrganization(), k.GetName())
}

func appDirName(k *edgeproto.AppInstKey) (string, error) {
	if k.GetName() == "" {
		return "", fmt.Errorf("%w: application instance key has no name", ErrInvalidObject)
	}
	return dirName(k.GetOrganization(), k.GetName())
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
	return k.GetOrganization() + "/" + k.GetName()
}

func appInstString(k *edgeproto.AppInstKey) string {
	return k.GetOrganization() + "/" + k.GetName()
}
