package ccrm

import (
	"strings"
	"sync"

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/hosts/controller"
	"github.com/edgekit/edgekit/internal/store"
	"google.golang.org/protobuf/proto"
)

// Trust policy exceptions are worked on per cloudlet: an exception has
// instances entries on many cloudlets, each cloudlet has its own engine,
// and the controller takes a CCRM's report on the entries of one cloudlet
// only, under the claim of that exception on that cloudlet
// (controller.TPEClaimKey). The work item of an exception on a cloudlet
// has the key "<exception key>@<cloudlet key>" and the state of its first
// entry there that needs work.

// tpeItemKey is the key of the work item of the exception of key excKey
// on the cloudlet of key string cloudlet.
func tpeItemKey(excKey, cloudlet string) string { return excKey + "@" + cloudlet }

// objectKey is the key string of the object of c: its key, but for the
// item of an exception on a cloudlet, the exception's.
func (c candidate) objectKey() string {
	if c.kind == "TrustPolicyException" {
		return strings.TrimSuffix(c.key, "@"+c.cloudlet)
	}
	return c.key
}

// tpeIndexer returns the cache handler that keeps the work items of the
// exceptions: one per cloudlet with an entry that needs work.
func tpeIndexer(r *Replica, kind string) func(store.Event[*edgeproto.TrustPolicyException]) {
	var (
		mu    sync.Mutex
		items = map[string][]string{} // exception key -> its item keys
	)
	return func(ev store.Event[*edgeproto.TrustPolicyException]) {
		mu.Lock()
		defer mu.Unlock()
		var keep []string
		if ev.Type == store.EventPut {
			byCloudlet := map[string]edgeproto.TrackedState{}
			var order []string
			for _, in := range ev.Object.GetInstances() {
				if _, ok := needsWork(in.GetState()); !ok {
					continue
				}
				cl := cloudletKeyString(in.GetCloudletKey())
				if _, seen := byCloudlet[cl]; !seen {
					byCloudlet[cl] = in.GetState()
					order = append(order, cl)
				}
			}
			for _, cl := range order {
				k := tpeItemKey(ev.Key, cl)
				keep = append(keep, k)
				r.index.put(workItem{kind: kind, key: k, state: byCloudlet[cl], cloudlet: cl,
					claimPath: tpeClaimPath(r, ev.Key, ev.Object, cl)})
			}
		}
		for _, k := range items[ev.Key] {
			if !contains(keep, k) {
				r.index.del(kind, k)
			}
		}
		if len(keep) > 0 {
			items[ev.Key] = keep
		} else {
			delete(items, ev.Key)
		}
		r.wake()
	}
}

// tpeClaimPath is the claim key of exc on the cloudlet of key string cl.
func tpeClaimPath(r *Replica, excKey string, exc *edgeproto.TrustPolicyException, cl string) string {
	for _, in := range exc.GetInstances() {
		if cloudletKeyString(in.GetCloudletKey()) == cl {
			return controller.TPEClaimKey(r.st.Prefix(), excKey, in.GetCloudletKey())
		}
	}
	return ""
}

func contains(list []string, s string) bool {
	for _, e := range list {
		if e == s {
			return true
		}
	}
	return false
}

// readTPE returns the exception of candidate c as read under its claim,
// with only its entries on c's cloudlet, those that need work in the
// state to submit them in; nil when none there needs work.
func (r *Replica) readTPE(c candidate, data []byte) (*edgeproto.TrustPolicyException, error) {
	exc, err := r.tpeKind.Decode(c.objectKey(), data)
	if err != nil {
		return nil, err
	}
	out := &edgeproto.TrustPolicyException{Key: exc.Key, State: exc.State, OutboundSecurityRules: exc.OutboundSecurityRules, Deleting: exc.Deleting}
	work := false
	for _, in := range exc.GetInstances() {
		if cloudletKeyString(in.GetCloudletKey()) != c.cloudlet {
			continue
		}
		in = proto.Clone(in).(*edgeproto.TrustPolicyExceptionInstance)
		if req, ok := needsWork(in.State); ok {
			in.State, work = req, true
		}
		out.Instances = append(out.Instances, in)
	}
	if !work {
		return nil, nil
	}
	return out, nil
}
