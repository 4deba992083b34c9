package reservations

import (
	"context"
	"fmt"
	"strings"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// OwnerKeyFunc maps an owner to the etcd key of the object that owns the
// value, and false for owners that are not objects (never collected).
type OwnerKeyFunc func(owner string) (string, bool)

// StoreOwners maps the owners executor.OwnerOf names for the objects a
// CCRM works on ("ClusterInst:<key>", "AppInst:<key>", "Cloudlet:<key>")
// to their keys in a region's store, whose prefix is storePrefix
// ("/edgekit/<region>/").
func StoreOwners(storePrefix string) OwnerKeyFunc {
	return func(owner string) (string, bool) {
		kind, key, ok := strings.Cut(owner, ":")
		if !ok || key == "" {
			return "", false
		}
		switch kind {
		case "ClusterInst", "AppInst", "Cloudlet":
			return storePrefix + kind + "/" + key, true
		}
		return "", false
	}
}

// Collect deletes every reserved value, of every cloudlet, whose owner's
// object does not exist, and returns how many it deleted. Each delete
// checks in its transaction that the value is unchanged and the owner's
// object still absent.
func (r *Reservations) Collect(ctx context.Context, ownerKey OwnerKeyFunc) (int, error) {
	resp, err := r.cli.Get(ctx, r.prefix, clientv3.WithPrefix())
	if err != nil {
		return 0, fmt.Errorf("reservations: collect: %w", err)
	}
	// Owners checked once each, at one revision.
	absent := map[string]bool{}
	n := 0
	for _, kv := range resp.Kvs {
		owner := string(kv.Value)
		okey, ok := ownerKey(owner)
		if !ok {
			continue
		}
		gone, seen := absent[okey]
		if !seen {
			or, err := r.cli.Get(ctx, okey, clientv3.WithCountOnly())
			if err != nil {
				return n, fmt.Errorf("reservations: collect: %w", err)
			}
			gone = or.Count == 0
			absent[okey] = gone
		}
		if !gone {
			continue
		}
		tr, err := r.cli.Txn(ctx).If(
			clientv3.Compare(clientv3.ModRevision(string(kv.Key)), "=", kv.ModRevision),
			clientv3.Compare(clientv3.CreateRevision(okey), "=", 0),
		).Then(clientv3.OpDelete(string(kv.Key))).Commit()
		if err != nil {
			return n, fmt.Errorf("reservations: collect: %w", err)
		}
		if tr.Succeeded {
			n++
			r.log.Info("reservation collected: its owner is gone", "key", string(kv.Key), "owner", owner)
		}
	}
	return n, nil
}
