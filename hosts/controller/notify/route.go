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

// placements records, for the objects of placed kinds, the cloudlets each
// sits on (by queue key; one for most kinds, those of its entries for a
// kind spread over cloudlets), so that a change moving an object, or
// deleting it, reaches the sessions of the cloudlets it leaves. Only the
// hub's goroutine uses it.
type placements map[string][]string

// route says which sessions a change of a kind concerns.
type route struct {
	// placed kinds sit on a cloudlet that a change may alter: the hub
	// records where each object is (placements), loading them when it
	// starts.
	placed bool
	// keys returns the routing keys of the sessions the change of the
	// object of key concerns; obj is the object, or for a delete the
	// object carrying only its key.
	keys func(pl placements, kind, key string, obj proto.Message, del bool) []string
}

// routeAll sends every change of the kind to every session.
var routeAll = route{keys: func(placements, string, string, proto.Message, bool) []string { return []string{allRoute} }}

// routeOwnCloudlet sends a cloudlet's changes to the cloudlet's session.
var routeOwnCloudlet = route{keys: func(_ placements, _, key string, _ proto.Message, _ bool) []string {
	return []string{cloudletRoute(key)}
}}

// routeOrganization sends the changes of an object to the sessions of the
// cloudlets of the organization org names (part of the object's key).
func routeOrganization[T proto.Message](org func(T) string) route {
	return route{keys: func(_ placements, _, _ string, obj proto.Message, _ bool) []string {
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
	return route{placed: true, keys: func(pl placements, kind, key string, obj proto.Message, del bool) []string {
		qk := qkey(kind, key)
		var was string
		had := len(pl[qk]) > 0
		var out []string
		if had {
			was = pl[qk][0]
			out = append(out, cloudletRoute(was))
		}
		o, ok := obj.(T)
		if del || !ok || where(o) == nil {
			delete(pl, qk)
			return out
		}
		now := cloudletKeyString(where(o))
		if had {
			pl[qk][0] = now // no allocation for an object that stays placed
		} else {
			pl[qk] = []string{now}
		}
		if !had || was != now {
			out = append(out, cloudletRoute(now))
		}
		return out
	}}
}

// routeSpread sends the changes of an object with entries on several
// cloudlets (where lists them, in any order and with repeats) to the
// sessions of those cloudlets and of the cloudlets it had entries on
// before the change, so that a cloudlet whose last entry went is sent the
// change that removed it.
func routeSpread[T proto.Message](where func(T) []*edgeproto.CloudletKey) route {
	return route{placed: true, keys: func(sp placements, kind, key string, obj proto.Message, del bool) []string {
		qk := qkey(kind, key)
		var out, now []string
		seen := map[string]bool{}
		for _, ck := range sp[qk] {
			seen[ck] = true
			out = append(out, cloudletRoute(ck))
		}
		if o, ok := obj.(T); ok && !del {
			for _, k := range where(o) {
				ck := cloudletKeyString(k)
				if !slices.Contains(now, ck) {
					now = append(now, ck)
				}
				if !seen[ck] {
					seen[ck] = true
					out = append(out, cloudletRoute(ck))
				}
			}
		}
		if len(now) == 0 {
			delete(sp, qk)
		} else {
			sp[qk] = now
		}
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
