package etcd

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"go.etcd.io/etcd/api/v3/authpb"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// RootRole is etcd's built-in role that may do everything, the
// administration of users and roles included.
const RootRole = "root"

// rootUser must exist, with RootRole, before etcd turns authentication on.
const rootUser = "root"

// Permission lets a role read, or read and write, every key under Prefix.
type Permission struct {
	// Prefix is the start of the keys; it must not be empty.
	Prefix string
	// Write lets the role write (put, delete, attach to a lease) as well
	// as read.
	Write bool
}

// Role is an etcd role and what it may access; a role has no access but
// what its permissions list.
type Role struct {
	Name        string
	Permissions []Permission
}

// User is an etcd user without a password: a client authenticates as it
// by presenting a certificate whose Common Name is the user's name, to a
// cluster that requires client certificates. An operator may still give it
// a password (etcdctl user passwd).
type User struct {
	Name string
	// Roles are granted to the user; RootRole makes it an administrator.
	Roles []string
}

// AuthPolicy is the users and roles of a cluster that EnableAuth sets up.
type AuthPolicy struct {
	Roles []Role
	Users []User
}

// Validate checks that the policy can be applied: names are set and
// unique, every permission has a prefix, every role a user is given is
// RootRole or a role of the policy, and one user at least is an
// administrator (otherwise nobody could change the policy again).
func (p AuthPolicy) Validate() error {
	roles := map[string]bool{}
	for _, r := range p.Roles {
		if err := checkAuthName("role", r.Name); err != nil {
			return err
		}
		if r.Name == RootRole {
			return fmt.Errorf("etcd auth: role %q is built in; grant it to users instead of listing it", RootRole)
		}
		if roles[r.Name] {
			return fmt.Errorf("etcd auth: role %q listed twice", r.Name)
		}
		roles[r.Name] = true
		for _, perm := range r.Permissions {
			if perm.Prefix == "" {
				return fmt.Errorf("etcd auth: role %q: a permission with an empty prefix (every key); give a prefix", r.Name)
			}
		}
	}
	users := map[string]bool{}
	admin := false
	for _, u := range p.Users {
		if err := checkAuthName("user", u.Name); err != nil {
			return err
		}
		if users[u.Name] {
			return fmt.Errorf("etcd auth: user %q listed twice", u.Name)
		}
		users[u.Name] = true
		for _, r := range u.Roles {
			if r != RootRole && !roles[r] {
				return fmt.Errorf("etcd auth: user %q: role %q is not in the policy", u.Name, r)
			}
			admin = admin || r == RootRole
		}
	}
	if !admin {
		return fmt.Errorf("etcd auth: no user has the %q role: nobody could administer the cluster", RootRole)
	}
	return nil
}

func checkAuthName(what, name string) error {
	if name == "" || strings.ContainsFunc(name, func(r rune) bool { return r <= ' ' || r == 0x7f }) {
		return fmt.Errorf("etcd auth: %s name %q: want printable text without spaces", what, name)
	}
	return nil
}

// EnableAuth makes the cluster of cli match p and turns authentication on.
// It is idempotent: roles and users that exist are kept, a role's
// permissions that p does not list are revoked, the roles p gives a user
// are granted and others it holds are revoked, and a user p does not list
// loses the roles of p it holds. Other users and roles are left as they
// are, with the "root" user that etcd requires (created without a
// password when missing). Once
// authentication is on, cli must authenticate as a user with RootRole.
func EnableAuth(ctx context.Context, cli *clientv3.Client, p AuthPolicy) error {
	if err := p.Validate(); err != nil {
		return err
	}
	for _, r := range p.Roles {
		if err := applyRole(ctx, cli, r); err != nil {
			return fmt.Errorf("etcd auth: role %s: %w", r.Name, err)
		}
	}
	users := p.Users
	if !slices.ContainsFunc(users, func(u User) bool { return u.Name == rootUser }) {
		users = append(slices.Clip(users), User{Name: rootUser, Roles: []string{RootRole}})
	}
	for _, u := range users {
		if err := applyUser(ctx, cli, u, u.Name != rootUser || slices.ContainsFunc(p.Users, func(pu User) bool { return pu.Name == rootUser })); err != nil {
			return fmt.Errorf("etcd auth: user %s: %w", u.Name, err)
		}
	}
	if err := revokeOthers(ctx, cli, p, users); err != nil {
		return err
	}
	st, err := cli.AuthStatus(ctx)
	if err != nil {
		return fmt.Errorf("etcd auth: status: %w", err)
	}
	if !st.Enabled {
		if _, err := cli.AuthEnable(ctx); err != nil {
			return fmt.Errorf("etcd auth: enable: %w", err)
		}
	}
	return nil
}

func applyRole(ctx context.Context, cli *clientv3.Client, r Role) error {
	if _, err := cli.RoleAdd(ctx, r.Name); err != nil && !errors.Is(err, rpctypes.ErrRoleAlreadyExist) {
		return err
	}
	got, err := cli.RoleGet(ctx, r.Name)
	if err != nil {
		return err
	}
	want := map[[2]string]authpb.Permission_Type{}
	for _, perm := range r.Permissions {
		k := [2]string{perm.Prefix, clientv3.GetPrefixRangeEnd(perm.Prefix)}
		t := authpb.READ
		if perm.Write || want[k] == authpb.READWRITE {
			t = authpb.READWRITE
		}
		want[k] = t
	}
	for _, have := range got.Perm {
		k := [2]string{string(have.Key), string(have.RangeEnd)}
		if t, ok := want[k]; ok && t == have.PermType {
			delete(want, k)
			continue
		}
		if _, err := cli.RoleRevokePermission(ctx, r.Name, k[0], k[1]); err != nil {
			return fmt.Errorf("revoke %s: %w", describeRange(k[0], k[1]), err)
		}
	}
	for _, perm := range r.Permissions {
		k := [2]string{perm.Prefix, clientv3.GetPrefixRangeEnd(perm.Prefix)}
		t, ok := want[k]
		if !ok {
			continue
		}
		delete(want, k)
		if _, err := cli.RoleGrantPermission(ctx, r.Name, k[0], k[1], clientv3.PermissionType(t)); err != nil {
			return fmt.Errorf("grant %s: %w", describeRange(k[0], k[1]), err)
		}
	}
	return nil
}

// applyUser creates u when missing and grants its roles; with exact, it
// also revokes the roles u should not have.
func applyUser(ctx context.Context, cli *clientv3.Client, u User, exact bool) error {
	_, err := cli.UserAddWithOptions(ctx, u.Name, "", &clientv3.UserAddOptions{NoPassword: true})
	if err != nil && !errors.Is(err, rpctypes.ErrUserAlreadyExist) {
		return err
	}
	got, err := cli.UserGet(ctx, u.Name)
	if err != nil {
		return err
	}
	for _, r := range u.Roles {
		if !slices.Contains(got.Roles, r) {
			if _, err := cli.UserGrantRole(ctx, u.Name, r); err != nil {
				return fmt.Errorf("grant role %s: %w", r, err)
			}
		}
	}
	if exact {
		for _, r := range got.Roles {
			if !slices.Contains(u.Roles, r) {
				if _, err := cli.UserRevokeRole(ctx, u.Name, r); err != nil {
					return fmt.Errorf("revoke role %s: %w", r, err)
				}
			}
		}
	}
	return nil
}

// revokeOthers takes the roles of p from every user p does not list, so
// that a user dropped from the policy loses its access.
func revokeOthers(ctx context.Context, cli *clientv3.Client, p AuthPolicy, listed []User) error {
	if len(p.Roles) == 0 {
		return nil
	}
	all, err := cli.UserList(ctx)
	if err != nil {
		return fmt.Errorf("etcd auth: list users: %w", err)
	}
	for _, name := range all.Users {
		if slices.ContainsFunc(listed, func(u User) bool { return u.Name == name }) {
			continue
		}
		got, err := cli.UserGet(ctx, name)
		if err != nil {
			return fmt.Errorf("etcd auth: user %s: %w", name, err)
		}
		for _, r := range got.Roles {
			if slices.ContainsFunc(p.Roles, func(pr Role) bool { return pr.Name == r }) {
				if _, err := cli.UserRevokeRole(ctx, name, r); err != nil {
					return fmt.Errorf("etcd auth: user %s: revoke role %s: %w", name, r, err)
				}
			}
		}
	}
	return nil
}

func describeRange(key, end string) string {
	return strconv.Quote(key) + ".." + strconv.Quote(end)
}

// EtcdctlCommands returns the etcdctl commands that set p up on a cluster
// whose authentication is still off, ending with "etcdctl auth enable";
// flags (endpoints, certificates) are the caller's to add after
// "etcdctl". They do what EnableAuth does on a fresh cluster.
func (p AuthPolicy) EtcdctlCommands() []string {
	var out []string
	for _, r := range p.Roles {
		out = append(out, "etcdctl role add "+shellQuote(r.Name))
		for _, perm := range r.Permissions {
			t := "read"
			if perm.Write {
				t = "readwrite"
			}
			out = append(out, fmt.Sprintf("etcdctl role grant-permission %s %s --prefix=true %s", shellQuote(r.Name), t, shellQuote(perm.Prefix)))
		}
	}
	users := p.Users
	if !slices.ContainsFunc(users, func(u User) bool { return u.Name == rootUser }) {
		users = append(slices.Clip(users), User{Name: rootUser, Roles: []string{RootRole}})
	}
	for _, u := range users {
		out = append(out, "etcdctl user add "+shellQuote(u.Name)+" --no-password")
		for _, r := range u.Roles {
			out = append(out, "etcdctl user grant-role "+shellQuote(u.Name)+" "+shellQuote(r))
		}
	}
	return append(out, "etcdctl auth enable")
}

func shellQuote(s string) string {
	if s != "" && !strings.ContainsFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./:=@", r))
	}) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
