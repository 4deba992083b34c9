package notify

import (
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

// placements records every object of the placed kinds: the cloudlet it
// sits on ("" for none) and its create and mod revisions, and, by
// cloudlet, the objects on it. A change moving an object, or deleting it,
// reaches the session of the cloudlet it leaves; a session's initial sync
// reads only the objects on its cloudlet. The hub's goroutine changes it
// with hub.mu held; sessions read it with hub.mu held.
type placements struct {
	byKey map[string]placed              // queue key -> where it is
	on    map[string]map[string]struct{} // cloudlet key string -> queue keys on it
}

// placed is where one object is and its revisions.
type placed struct {
	cloudlet    string
	create, mod int64
}

func newPlacements() *placements {
	return &placements{byKey: map[string]placed{}, on: map[string]map[string]struct{}{}}
}

// set records the object of queue key qk as on cloudlet ("" for none).
func (pl *placements) set(qk string, p placed) {
	if old, ok := pl.byKey[qk]; ok && old.cloudlet != p.cloudlet {
		pl.unindex(qk, old.cloudlet)
	}
	pl.byKey[qk] = p
	if p.cloudlet != "" {
		set := pl.on[p.cloudlet]
		if set == nil {
			set = map[string]struct{}{}
			pl.on[p.cloudlet] = set
		}
		set[qk] = struct{}{}
	}
}

// drop forgets the object of queue key qk.
func (pl *placements) drop(qk string) {
	if old, ok := pl.byKey[qk]; ok {
		pl.unindex(qk, old.cloudlet)
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
	// where is the cloudlet an object of a placed kind is on, nil for none
	// (or an object of another type).
	where func(obj proto.Message) *edgeproto.CloudletKey
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
	whereOf := func(obj proto.Message) *edgeproto.CloudletKey {
		o, ok := obj.(T)
		if !ok {
			return nil
		}
		return where(o)
	}
	return route{placed: true, where: whereOf, keys: func(pl *placements, kind, key string, obj proto.Message, del bool, create, mod int64) []string {
		qk := qkey(kind, key)
		old, had := pl.byKey[qk]
		was := old.cloudlet
		had = had && was != ""
		var out []string
		if had {
			out = append(out, cloudletRoute(was))
		}
		if del {
			pl.drop(qk)
			return out
		}
		now := ""
		if cl := whereOf(obj); cl != nil {
			now = cloudletKeyString(cl)
		}
		pl.set(qk, placed{cloudlet: now, create: create, mod: mod})
		if now != "" && (!had || was != now) {
			out = append(out, cloudletRoute(now))
		}
		return out
	}}
}
