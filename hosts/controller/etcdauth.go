package controller

import (
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"os"
	"slices"

	"github.com/edgekit/edgekit/hosts/ccrm/reservations"
	"github.com/edgekit/edgekit/internal/etcd"
	"github.com/edgekit/edgekit/internal/store"
)

// DefaultEtcdCCRMUser is the etcd user of the CCRM replicas when none is
// named: the Common Name of the certificate a replica presents under a
// development authority (CCRMCertName).
const DefaultEtcdCCRMUser = CCRMCertName

// EtcdUsers names the etcd users of a region's hosts. Users authenticate
// by the Common Name of their client certificate.
type EtcdUsers struct {
	// Controller is the controller's user, an administrator (etcd's root
	// role): it writes every object and sets the users up.
	Controller string
	// CCRMs are the CCRM replicas' users (one per replica, or one they
	// share): they read the region and write only their claims and
	// reservations (see CCRMRole).
	CCRMs []string
	// FluidosNodes are the ids of FLUIDOS nodes that keep their store in
	// this cluster: each gets a user named after it that reads and writes
	// its own objects only (see FluidosNodeRole).
	FluidosNodes []string
}

// CCRMRole is the name of the etcd role of a region's CCRM replicas.
func CCRMRole(region string) string { return "edgekit-" + region + "-ccrm" }

// FluidosNodeRole is the name of the etcd role of a FLUIDOS node.
func FluidosNodeRole(node string) string { return "edgekit-fluidos-" + node }

// EtcdAuthPolicy returns the etcd users and roles of region: the
// controller administers; a CCRM replica reads everything of the region
// and writes only under its claims (ClaimPrefix) and reservations
// (reservations.Prefix), its lease being what those keys are attached to;
// a FLUIDOS node reads and writes its own store (named after it) only.
func EtcdAuthPolicy(region string, u EtcdUsers) (etcd.AuthPolicy, error) {
	if region == "" {
		return etcd.AuthPolicy{}, fmt.Errorf("etcd auth: no region")
	}
	if u.Controller == "" {
		return etcd.AuthPolicy{}, fmt.Errorf("etcd auth: no controller user")
	}
	prefix := store.Root + region + "/"
	p := etcd.AuthPolicy{Users: []etcd.User{{Name: u.Controller, Roles: []string{etcd.RootRole}}}}
	if len(u.CCRMs) > 0 {
		role := CCRMRole(region)
		p.Roles = append(p.Roles, etcd.Role{Name: role, Permissions: []etcd.Permission{
			{Prefix: prefix},
			{Prefix: prefix + ClaimPrefix, Write: true},
			{Prefix: prefix + reservations.Prefix, Write: true},
		}})
		for _, name := range u.CCRMs {
			if name == u.Controller {
				return etcd.AuthPolicy{}, fmt.Errorf("etcd auth: CCRM user %q is the controller's user", name)
			}
			p.Users = append(p.Users, etcd.User{Name: name, Roles: []string{role}})
		}
	}
	for _, id := range u.FluidosNodes {
		if id == "" || id == region {
			return etcd.AuthPolicy{}, fmt.Errorf("etcd auth: FLUIDOS node %q: want a name other than the region's", id)
		}
		role := FluidosNodeRole(id)
		p.Roles = append(p.Roles, etcd.Role{Name: role, Permissions: []etcd.Permission{{Prefix: store.Root + id + "/", Write: true}}})
		if slices.ContainsFunc(p.Users, func(x etcd.User) bool { return x.Name == id }) {
			return etcd.AuthPolicy{}, fmt.Errorf("etcd auth: FLUIDOS node %q has the name of another user", id)
		}
		p.Users = append(p.Users, etcd.User{Name: id, Roles: []string{role}})
	}
	if err := p.Validate(); err != nil {
		return etcd.AuthPolicy{}, err
	}
	return p, nil
}

// certCommonName returns the Common Name of the first certificate of a
// PEM file: the etcd user a client presenting it authenticates as.
func certCommonName(file string) (string, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return "", err
	}
	block, _ := pem.Decode(b)
	if block == nil || block.Type != "CERTIFICATE" {
		return "", fmt.Errorf("%s: no CERTIFICATE PEM block", file)
	}
	c, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		return "", fmt.Errorf("%s: %w", file, err)
	}
	if c.Subject.CommonName == "" {
		return "", fmt.Errorf("%s: the certificate has no Common Name (the etcd user it authenticates as)", file)
	}
	return c.Subject.CommonName, nil
}
