package controller

import (
	"strings"

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/internal/store"
	"google.golang.org/protobuf/proto"
)

// Applying TrustPolicyExceptions: the one place that decides which
// AppInsts an exception applies to and what each of its
// TrustPolicyException.instances entries asks of the resource managers.
//
// An exception applies to the instances of its App on the cloudlets of its
// pool while it is ACTIVE and not being deleted; instances being deleted
// are left out (the exception is removed before the instance). Each entry
// asks for CREATE_REQUESTED (apply), UPDATE_REQUESTED (apply the changed
// rules again) or DELETE_REQUESTED (remove); the resource manager of the
// entry's cloudlet (its CRM through notify, or a CCRM) works on it and
// reports the entry's state, which ApplyInfo records (see tpereport.go).
// An entry leaves the list when its removal is done; a deleted exception
// leaves the store when its last entry did.
//
// The controller re-decides an exception's entries in the transaction of
// every change that moves them: the exception's own update (approval,
// rejection, rules) and delete, its pool's members, and an instance of its
// App created or deleted.

// tpeChange is what a transaction changes that the store does not show
// yet to the sync (the transaction writes it after the rules ran).
type tpeChange struct {
	// pool replaces the stored pool of that key.
	pool *edgeproto.CloudletPool
	// add is an instance being created.
	add *edgeproto.AppInst
	// drop is the key string of an instance being deleted.
	drop string
	// rules says the exception's rules changed: applied entries apply them
	// again.
	rules bool
}

func appInstKeyString(k *edgeproto.AppInstKey) string {
	return (&edgeproto.AppInst{Key: k}).GetKeyString()
}

// refChildren lists, in tx, the key strings of the children of kind child
// that depend on parent.
func (c *Controller) refChildren(tx *store.Tx, parent ref, child string) ([]string, error) {
	kvs, err := tx.List(c.refPrefix(parent) + child + "/")
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(kvs))
	for _, kv := range kvs {
		out = append(out, strings.TrimPrefix(string(kv.Value), child+" "))
	}
	return out, nil
}

// tpeTargets returns, read in tx, the instances exc applies to now, by key
// string.
func (c *Controller) tpeTargets(tx *store.Tx, exc *edgeproto.TrustPolicyException, ch tpeChange) (map[string]*edgeproto.AppInst, error) {
	out := map[string]*edgeproto.AppInst{}
	if exc.GetDeleting() || exc.GetState() != edgeproto.TrustPolicyExceptionState_TRUST_POLICY_EXCEPTION_STATE_ACTIVE {
		return out, nil
	}
	pool := ch.pool
	if pool == nil || !proto.Equal(pool.GetKey(), exc.GetKey().GetCloudletPoolKey()) {
		p, found, err := c.cloudletPools.store.TxGet(tx, (&edgeproto.CloudletPool{Key: exc.GetKey().GetCloudletPoolKey()}).GetKeyString())
		if err != nil {
			return nil, err
		}
		if !found {
			return out, nil
		}
		pool = p
	}
	app := &edgeproto.App{Key: exc.GetKey().GetAppKey()}
	keys, err := c.refChildren(tx, c.apps.refOf(app), c.appInsts.name)
	if err != nil {
		return nil, err
	}
	consider := func(ai *edgeproto.AppInst) {
		if proto.Equal(ai.GetAppKey(), app.Key) && poolHas(pool, ai.GetCloudletKey()) && !edgeproto.IsDeleteState(ai.GetState()) {
			out[ai.GetKeyString()] = ai
		}
	}
	for _, k := range keys {
		if k == ch.drop {
			continue
		}
		ai, found, err := c.appInsts.store.TxGet(tx, k)
		if err != nil {
			return nil, err
		}
		if found {
			consider(ai)
		}
	}
	if ch.add != nil {
		consider(ch.add)
	}
	return out, nil
}

// isTPEDeleteState reports whether an entry in state s is being removed,
// was, or failed to be (a failed removal is asked for again by a delete of
// the exception, not by every change).
func isTPEDeleteState(s edgeproto.TrackedState) bool {
	return edgeproto.IsDeleteState(s) || s == edgeproto.TrackedState_TRACKED_STATE_DELETE_ERROR
}

// syncTPE sets, in exc, the request of every instances entry to what exc
// asks for now (read in tx) and reports whether anything changed.
func (c *Controller) syncTPE(tx *store.Tx, exc *edgeproto.TrustPolicyException, ch tpeChange) (bool, error) {
	want, err := c.tpeTargets(tx, exc, ch)
	if err != nil {
		return false, err
	}
	changed := false
	set := func(in *edgeproto.TrustPolicyExceptionInstance, s edgeproto.TrackedState) {
		if in.State != s || len(in.Errors) > 0 {
			in.State, in.Errors = s, nil
			changed = true
		}
	}
	have := map[string]bool{}
	for _, in := range exc.Instances {
		k := appInstKeyString(in.GetAppInstKey())
		have[k] = true
		_, wanted := want[k]
		switch {
		case wanted && isTPEDeleteState(in.State):
			set(in, edgeproto.TrackedState_TRACKED_STATE_CREATE_REQUESTED)
		case wanted && ch.rules:
			switch in.State {
			case edgeproto.TrackedState_TRACKED_STATE_READY, edgeproto.TrackedState_TRACKED_STATE_UPDATE_ERROR:
				set(in, edgeproto.TrackedState_TRACKED_STATE_UPDATE_REQUESTED)
			case edgeproto.TrackedState_TRACKED_STATE_CREATE_ERROR:
				set(in, edgeproto.TrackedState_TRACKED_STATE_CREATE_REQUESTED)
			}
		case !wanted && !isTPEDeleteState(in.State):
			set(in, edgeproto.TrackedState_TRACKED_STATE_DELETE_REQUESTED)
		}
	}
	for k, ai := range want {
		if have[k] {
			continue
		}
		exc.Instances = append(exc.Instances, &edgeproto.TrustPolicyExceptionInstance{
			AppInstKey:  ai.GetKey().Clone(),
			CloudletKey: ai.GetCloudletKey().Clone(),
			ClusterKey:  ai.GetClusterKey().Clone(),
			State:       edgeproto.TrackedState_TRACKED_STATE_CREATE_REQUESTED,
		})
		changed = true
	}
	if changed {
		// A stable order, so that equal requests are equal objects.
		sortTPEInstances(exc.Instances)
	}
	return changed, nil
}

func sortTPEInstances(list []*edgeproto.TrustPolicyExceptionInstance) {
	for i := 1; i < len(list); i++ {
		for j := i; j > 0 && appInstKeyString(list[j].GetAppInstKey()) < appInstKeyString(list[j-1].GetAppInstKey()); j-- {
			list[j], list[j-1] = list[j-1], list[j]
		}
	}
}

// resyncTPEs syncs, in tx, every exception that depends on parent (an App
// or a CloudletPool) and stores those that changed.
func (c *Controller) resyncTPEs(tx *store.Tx, parent ref, ch tpeChange) error {
	keys, err := c.refChildren(tx, parent, c.tpes.name)
	if err != nil {
		return err
	}
	for _, k := range keys {
		exc, found, err := c.tpes.store.TxGet(tx, k)
		if err != nil {
			return err
		}
		if !found {
			continue
		}
		changed, err := c.syncTPE(tx, exc, ch)
		if err != nil {
			return err
		}
		if changed {
			stamp(exc, "updated_at")
			if err := c.tpes.store.TxPut(tx, exc); err != nil {
				return err
			}
		}
	}
	return nil
}

// appInstTPEs syncs, in tx, the exceptions of the App of an instance being
// created (add) or deleted (drop).
func (c *Controller) appInstTPEs(tx *store.Tx, ai *edgeproto.AppInst, ch tpeChange) error {
	return c.resyncTPEs(tx, c.apps.refOf(&edgeproto.App{Key: ai.GetAppKey()}), ch)
}

// removeTPE deletes exc in tx when no entry holds it any more, else asks
// every entry to remove it (again, for a removal that failed) and marks it
// deleting: it leaves the store with its last entry's removal.
func (c *Controller) removeTPE(tx *store.Tx, exc *edgeproto.TrustPolicyException) error {
	next := exc.Clone()
	next.Deleting = true
	if _, err := c.syncTPE(tx, next, tpeChange{}); err != nil {
		return err
	}
	// A delete asks again for the removals that failed.
	for _, in := range next.Instances {
		if in.State == edgeproto.TrackedState_TRACKED_STATE_DELETE_ERROR {
			in.State, in.Errors = edgeproto.TrackedState_TRACKED_STATE_DELETE_REQUESTED, nil
		}
	}
	// Every entry left is removing the exception (an entry that never
	// reported may be running already: it is removed like the others).
	if len(next.Instances) == 0 {
		c.tpes.unlinkRefs(c, tx, exc)
		c.tpes.store.TxDelete(tx, exc.GetKeyString())
		return nil
	}
	stamp(next, "updated_at")
	return c.tpes.store.TxPut(tx, next)
}
