package reservations

import (
	"fmt"
	"slices"
	"strings"

	"github.com/edgekit/edgekit/executor"
	clientv3 "go.etcd.io/etcd/client/v3"
)

type valueKey struct{ kind, value string }

type entry struct {
	owner  string
	modRev int64
}

// set is what an update function works on: the table as read at rev, the
// reads to guard and the changes to commit (an empty owner deletes).
type set struct {
	base    map[valueKey]entry
	prefix  string // of the cloudlet
	rev     int64
	reads   map[valueKey]int64 // mod revision seen (0: free)
	scans   map[string]bool    // kinds listed ("" : every kind)
	changes map[valueKey]string
	err     error // a bad kind or value given to Reserve
}

var _ executor.ReservationSet = (*set)(nil)

func newSet(prefix string, resp *clientv3.GetResponse) *set {
	s := &set{base: map[valueKey]entry{}, prefix: prefix, rev: resp.Header.Revision,
		reads: map[valueKey]int64{}, scans: map[string]bool{}, changes: map[valueKey]string{}}
	for _, kv := range resp.Kvs {
		kind, value, ok := strings.Cut(strings.TrimPrefix(string(kv.Key), prefix), "/")
		if !ok {
			continue
		}
		s.base[valueKey{kind, value}] = entry{owner: string(kv.Value), modRev: kv.ModRevision}
	}
	return s
}

func (s *set) path(k valueKey) string { return s.prefix + k.kind + "/" + k.value }

func (s *set) owner(k valueKey) string {
	if o, ok := s.changes[k]; ok {
		return o
	}
	return s.base[k].owner
}

func (s *set) Owner(kind, value string) string {
	k := valueKey{kind, value}
	if _, ok := s.reads[k]; !ok {
		s.reads[k] = s.base[k].modRev
	}
	return s.owner(k)
}

func (s *set) Reserve(kind, value, owner string) error {
	switch {
	case kind == "" || strings.Contains(kind, "/"):
		err := fmt.Errorf("reservations: kind %q: want non-empty text without '/'", kind)
		s.err = err
		return err
	case value == "" || owner == "":
		err := fmt.Errorf("reservations: %s %q for %q: empty value or owner", kind, value, owner)
		s.err = err
		return err
	}
	if holder := s.Owner(kind, value); holder != "" && holder != owner {
		return &executor.ReservedError{Kind: kind, Value: value, Owner: owner, Holder: holder}
	}
	s.changes[valueKey{kind, value}] = owner
	return nil
}

// keys returns every key of kind ("" : every kind) known to the set, read
// or changed, and guards the kind against additions.
func (s *set) keys(kind string) []valueKey {
	s.scans[kind] = true
	var out []valueKey
	for k := range s.base {
		if kind == "" || k.kind == kind {
			out = append(out, k)
		}
	}
	for k := range s.changes {
		if _, inBase := s.base[k]; !inBase && (kind == "" || k.kind == kind) {
			out = append(out, k)
		}
	}
	return out
}

func (s *set) Release(kind, owner string) {
	for _, k := range s.keys(kind) {
		if s.Owner(k.kind, k.value) == owner {
			s.changes[k] = ""
		}
	}
}

func (s *set) Values(kind, owner string) []string {
	var out []string
	for _, k := range s.keys(kind) {
		if s.Owner(k.kind, k.value) == owner {
			out = append(out, k.value)
		}
	}
	slices.Sort(out)
	return out
}

// compares guard what the update function read.
func (s *set) compares() []clientv3.Cmp {
	var cmps []clientv3.Cmp
	for k, rev := range s.reads {
		cmps = append(cmps, clientv3.Compare(clientv3.ModRevision(s.path(k)), "=", rev))
	}
	for kind := range s.scans {
		p := s.prefix
		if kind != "" {
			p += kind + "/"
		}
		cmps = append(cmps, clientv3.Compare(clientv3.ModRevision(p), "<", s.rev+1).WithPrefix())
	}
	return cmps
}

// ops are the changes to commit; a value released and not held before is
// nothing to do.
func (s *set) ops() []clientv3.Op {
	var ops []clientv3.Op
	for k, owner := range s.changes {
		switch {
		case owner != "":
			if s.base[k].owner != owner {
				ops = append(ops, clientv3.OpPut(s.path(k), owner))
			}
		case s.base[k].owner != "":
			ops = append(ops, clientv3.OpDelete(s.path(k)))
		}
	}
	return ops
}
