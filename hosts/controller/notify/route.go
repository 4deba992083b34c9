package notify

import (
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
	if old, ok := pl.byKey[qk]; ok {
		for _, ck := range old.cloudlets {
			if !p.on(ck) {
				pl.unindex(qk, ck)
			}
		}
	}
	pl.byKey[qk] = p
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
