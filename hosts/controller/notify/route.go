package notify

import (
	"cmp"
	"slices"

	"github.com/edgekit/edgekit/edgeproto"
	"google.golang.org/protobuf/proto"
)

// Routing keys: each session is registered under three, and a change is
// handed to the sessions of the keys its kind's route names.
const allRoute = "*" // every session

func cloudletRoute(ck string) string { return "cloudlet:" + ck }
func orgRoute(org string) string     { return "org:" + org }

// sessionRoutes are the routing keys of the session of cloudlet.
func sessionRoutes(cloudlet *edgeproto.CloudletKey) []string {
	return []string{allRoute, cloudletRoute(cloudletKeyString(cloudlet)), orgRoute(cloudlet.GetOrganization())}
}

// placements records every object of the placed kinds: the cloudlets it
// sits on (none, one, or for a kind spread over cloudlets those of its
// entries) and its create and mod revisions, and, by cloudlet, the objects
// on it. A change moving an object, or deleting it, reaches the sessions
// of the cloudlets it leaves; a session's initial sync reads only the
// objects on its cloudlet. The hub's goroutine changes it with hub.mu
// held; sessions read it with hub.mu held.
type placements struct {
	byKey map[string]placed              // queue key -> where it is
	on    map[string]map[string]struct{} // cloudlet key string -> queue keys on it
	// creates and mods list the objects by create and by mod revision,
	// in revision order (once sorted after a load: see sort), so that a
	// resumed sync finds what was created or changed since its revision
	// in the time of what did, not of every object of the region. An
	// entry is current while the object's revision is still the entry's;
	// the others are skipped, and dropped when they outnumber the objects.
	creates, mods []revKey
}

// revKey is an entry of placements.creates or placements.mods.
type revKey struct {
	rev int64
	qk  string
}

// placed is where one object is and its revisions.
type placed struct {
	cloudlets   []string // distinct
	create, mod int64
}

// on says whether the object is on cloudlet ck.
func (p placed) on(ck string) bool { return slices.Contains(p.cloudlets, ck) }

func newPlacements() *placements {
	return &placements{byKey: map[string]placed{}, on: map[string]map[string]struct{}{}}
}

// set records the object of queue key qk as placed p.
func (pl *placements) set(qk string, p placed) {
	old, ok := pl.byKey[qk]
	if ok {
		for _, ck := range old.cloudlets {
			if !p.on(ck) {
				pl.unindex(qk, ck)
			}
		}
	}
	if !ok || old.create != p.create {
		pl.creates = append(pl.creates, revKey{p.create, qk})
	}
	if !ok || old.mod != p.mod {
		pl.mods = append(pl.mods, revKey{p.mod, qk})
	}
	pl.byKey[qk] = p
	if len(pl.creates)+len(pl.mods) > 4*len(pl.byKey)+1024 {
		pl.compact()
	}
	for _, ck := range p.cloudlets {
		set := pl.on[ck]
		if set == nil {
			set = map[string]struct{}{}
			pl.on[ck] = set
		}
		set[qk] = struct{}{}
	}
}

// drop forgets the object of queue key qk.
func (pl *placements) drop(qk string) {
	if old, ok := pl.byKey[qk]; ok {
		for _, ck := range old.cloudlets {
			pl.unindex(qk, ck)
		}
		delete(pl.byKey, qk)
	}
}

// sort puts creates and mods in revision order (set appends in the
// order it is called: revision order for the hub's changes, key order for
// a load).
func (pl *placements) sort() {
	byRev := func(a, b revKey) int { return cmp.Compare(a.rev, b.rev) }
	slices.SortFunc(pl.creates, byRev)
	slices.SortFunc(pl.mods, byRev)
}

// compact drops the entries of creates and mods that are no longer
// current.
func (pl *placements) compact() {
	pl.creates = slices.DeleteFunc(pl.creates, func(e revKey) bool {
		p, ok := pl.byKey[e.qk]
		return !ok || p.create != e.rev
	})
	pl.mods = slices.DeleteFunc(pl.mods, func(e revKey) bool {
		p, ok := pl.byKey[e.qk]
		return !ok || p.mod != e.rev
	})
}

// since calls fn with the current entries of log (creates or mods,
// sorted) past revision from; current says whether an entry is.
func (pl *placements) since(log []revKey, from int64, current func(p placed, rev int64) bool, fn func(qk string, p placed)) {
	i, _ := slices.BinarySearchFunc(log, from+1, func(e revKey, rev int64) int { return cmp.Compare(e.rev, rev) })
	for _, e := range log[i:] {
		if p, ok := pl.byKey[e.qk]; ok && current(p, e.rev) {
			fn(e.qk, p)
		}
	}
}

func (pl *placements) unindex(qk, cloudlet string) {
	if set := pl.on[cloudlet]; set != nil {
		delete(set, qk)
		if len(set) == 0 {
			delete(pl.on, cloudlet)
		}
	}
}

// route says which sessions a change of a kind concerns.
type route struct {
	// placed kinds sit on a cloudlet that a change may alter: the hub
	// records where each object is (placements), loading them when it
	// starts.
	placed bool
	// keys returns the routing keys of the sessions the change of the
	// object of key concerns; obj is the object, or for a delete the
	// object carrying only its key; create and mod are the object's
	// revisions.
	keys func(pl *placements, kind, key string, obj proto.Message, del bool, create, mod int64) []string
}

// routeAll sends every change of the kind to every session.
var routeAll = route{keys: func(*placements, string, string, proto.Message, bool, int64, int64) []string {
	return []string{allRoute}
}}

// routeOwnCloudlet sends a cloudlet's changes to the cloudlet's session.
var routeOwnCloudlet = route{keys: func(_ *placements, _, key string, _ proto.Message, _ bool, _, _ int64) []string {
	return []string{cloudletRoute(key)}
}}

// routeOrganization sends the changes of an object to the sessions of the
// cloudlets of the organization org names (part of the object's key).
func routeOrganization[T proto.Message](org func(T) string) route {
	return route{keys: func(_ *placements, _, _ string, obj proto.Message, _ bool, _, _ int64) []string {
		o, ok := obj.(T)
		if !ok {
			return nil
		}
		return []string{orgRoute(org(o))}
	}}
}

// routePlaced sends the changes of an object placed on a cloudlet (where
// names it, nil when the object is on none) to the session of that
// cloudlet and, when the change moved or deleted it, to that of the
// cloudlet it was on.
func routePlaced[T proto.Message](where func(T) *edgeproto.CloudletKey) route {
	return routeSpread(func(o T) []*edgeproto.CloudletKey {
		if cl := where(o); cl != nil {
			return []*edgeproto.CloudletKey{cl}
		}
		return nil
	})
}

// routeSpread sends the changes of an object with entries on several
// cloudlets (where lists them, in any order and with repeats) to the
// sessions of those cloudlets and of the cloudlets it had entries on
// before the change, so that a cloudlet whose last entry went is sent the
// change that removed it.
func routeSpread[T proto.Message](where func(T) []*edgeproto.CloudletKey) route {
	return route{placed: true, keys: func(pl *placements, kind, key string, obj proto.Message, del bool, create, mod int64) []string {
		qk := qkey(kind, key)
		old := pl.byKey[qk]
		out := make([]string, 0, len(old.cloudlets)+1)
		for _, ck := range old.cloudlets {
			out = append(out, cloudletRoute(ck))
		}
		if del {
			pl.drop(qk)
			return out
		}
		var now []string
		if o, ok := obj.(T); ok {
			for _, k := range where(o) {
				ck := cloudletKeyString(k)
				if slices.Contains(now, ck) {
					continue
				}
				now = append(now, ck)
				if !old.on(ck) {
					out = append(out, cloudletRoute(ck))
				}
			}
		}
		if slices.Equal(now, old.cloudlets) {
			now = old.cloudlets // no allocation kept for an object that stays placed
		}
		pl.set(qk, placed{cloudlets: now, create: create, mod: mod})
		return out
	}}
}

// tpeCloudlets lists the cloudlets of an exception's entries.
func tpeCloudlets(e *edgeproto.TrustPolicyException) []*edgeproto.CloudletKey {
	out := make([]*edgeproto.CloudletKey, 0, len(e.GetInstances()))
	for _, in := range e.GetInstances() {
		out = append(out, in.GetCloudletKey())
	}
	return out
}
