package controller

import (
	"context"

	"github.com/edgekit/edgekit/fieldmap"
	"github.com/edgekit/edgekit/internal/store"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
)

// rules are a kind's checks that span objects. Each runs inside the store
// transaction that writes the change, so what it read cannot change before
// the write lands (the transaction re-runs otherwise). A nil rule allows.
type rules[T any] struct {
	// create checks (and may complete) an object about to be created.
	create func(tx *store.Tx, obj T) error
	// update checks an update: cur is the stored object, next the object
	// after the update's fields were copied in.
	update func(tx *store.Tx, cur, next T, fm *fieldmap.FieldMap) error
	// delete checks that cur may be deleted.
	delete func(tx *store.Tx, cur T) error
}

// authorize checks that the caller may change obj (or, with read, see it).
// Objects without an owner are changed by admins only and seen by all.
func authorize[T store.Object[T]](ctx context.Context, k *kind[T], obj T, read bool) error {
	p, err := principal(ctx)
	if err != nil {
		return err
	}
	owner := k.owner(obj)
	if p.owns(owner) || (read && (owner == "" || k.readBy(p, obj))) {
		return nil
	}
	return errDenied(k.name, obj.GetKeyString())
}

// readBy reports whether p is one of the organizations besides the owner
// that may see obj.
func (k *kind[T]) readBy(p Principal, obj T) bool {
	if k.readers == nil || p.CCRM || p.Organization == "" {
		return false
	}
	return contains(k.readers(obj), p.Organization)
}

// createObject stores a new object after the caller's rights, the object
// and the kind's rules were checked, stamping created_at and updated_at.
// prepare, when not nil, runs inside the transaction after the rules to
// set what the controller owns (a requested state).
func createObject[T store.Object[T]](ctx context.Context, c *Controller, k *kind[T], r rules[T], obj T, prepare func(tx *store.Tx, obj T) error) (T, int64, error) {
	var zero T
	if err := k.checkCreate(obj); err != nil {
		return zero, 0, err
	}
	if err := authorize(ctx, k, obj, false); err != nil {
		return zero, 0, err
	}
	obj = obj.Clone()
	stamp(obj, "created_at")
	stamp(obj, "updated_at")
	key := obj.GetKeyString()
	if err := checkSize(k.name, key, obj); err != nil {
		return zero, 0, err
	}
	req := obj
	rev, err := c.store.Txn(ctx, func(tx *store.Tx) error {
		// The rules and prepare complete the object from what they read;
		// a run again (after a stale read) starts from the request.
		obj = req.Clone()
		if _, found, err := k.txGet(tx, key); err != nil {
			return err
		} else if found {
			return status.Errorf(codes.AlreadyExists, "%s %s already exists", k.name, key)
		}
		if r.create != nil {
			if err := r.create(tx, obj); err != nil {
				return err
			}
		}
		if prepare != nil {
			if err := prepare(tx, obj); err != nil {
				return err
			}
		}
		k.linkRefs(c, tx, obj)
		return k.store.TxPut(tx, obj)
	})
	if err != nil {
		return zero, 0, apiError(tooLarge(k.name, key, err))
	}
	return obj, rev, nil
}

// updateObject applies the fields of src that flags name to the stored
// object, after checking the caller's rights, the flags and the kind's
// rules. prepare, when not nil, runs inside the transaction on the updated
// object (to request the change from a resource manager). It returns the
// stored object, the revision and whether anything changed.
func updateObject[T store.Object[T]](ctx context.Context, c *Controller, k *kind[T], r rules[T], src T, flags []string, prepare func(tx *store.Tx, cur, next T) error) (T, int64, bool, error) {
	var zero T
	fm, err := k.parseUpdate(src, flags)
	if err != nil {
		return zero, 0, false, err
	}
	if err := authorize(ctx, k, src, false); err != nil {
		return zero, 0, false, err
	}
	key := src.GetKeyString()
	var (
		out     T
		changed bool
	)
	rev, err := c.store.Txn(ctx, func(tx *store.Tx) error {
		cur, found, err := k.txGet(tx, key)
		if err != nil {
			return err
		}
		if !found {
			return status.Errorf(codes.NotFound, "%s %s not found", k.name, key)
		}
		next := cur.Clone()
		changed = next.CopyInFields(src, fm) > 0
		if !changed {
			out = cur
			return nil
		}
		if r.update != nil {
			if err := r.update(tx, cur, next, fm); err != nil {
				return err
			}
		}
		if prepare != nil {
			if err := prepare(tx, cur, next); err != nil {
				return err
			}
		}
		stamp(next, "updated_at")
		out = next
		k.unlinkRefs(c, tx, cur)
		k.linkRefs(c, tx, next)
		return putWithinLimit(tx, k, key, next)
	})
	if err != nil {
		return zero, 0, false, apiError(tooLarge(k.name, key, err))
	}
	return out, rev, changed, nil
}

// deleteObject removes the object of key after checking the caller's
// rights and the kind's rules. remove, when not nil, replaces the removal:
// it runs inside the transaction (to request the delete from a resource
// manager instead).
func deleteObject[T store.Object[T]](ctx context.Context, c *Controller, k *kind[T], r rules[T], keyMsg proto.Message, remove func(tx *store.Tx, cur T) error) (T, int64, error) {
	var zero T
	probe, err := withKey[T](keyMsg)
	if err != nil {
		return zero, 0, err
	}
	if err := checkKey(probe); err != nil {
		return zero, 0, invalidf("%s: %v", k.name, err)
	}
	if err := authorize(ctx, k, probe, false); err != nil {
		return zero, 0, err
	}
	key := probe.GetKeyString()
	var out T
	rev, err := c.store.Txn(ctx, func(tx *store.Tx) error {
		cur, found, err := k.txGet(tx, key)
		if err != nil {
			return err
		}
		if !found {
			return status.Errorf(codes.NotFound, "%s %s not found", k.name, key)
		}
		if r.delete != nil {
			if err := r.delete(tx, cur); err != nil {
				return err
			}
		}
		out = cur
		if remove != nil {
			return remove(tx, cur)
		}
		k.unlinkRefs(c, tx, cur)
		k.store.TxDelete(tx, key)
		return nil
	})
	if err != nil {
		return zero, 0, apiError(err)
	}
	return out, rev, nil
}

// showObjects sends, redacted, every object of k that the caller may see
// and that matches filter, in key order, as of one revision at or after
// the store's current one (so the caller reads its own writes). It sends
// each object as it walks them (see walkFresh): it holds one object at a
// time, not the answer, and a client that reads slowly holds the walk back
// through the stream's flow control.
func showObjects[T store.Object[T]](ctx context.Context, c *Controller, k *kind[T], filter T, send func(T) error) error {
	p, err := principal(ctx)
	if err != nil {
		return err
	}
	return walkFresh(ctx, c, k.store, k.cache, func(obj T) error {
		owner := k.owner(obj)
		if !p.owns(owner) && owner != "" && !k.readBy(p, obj) {
			return nil
		}
		if !matches(filter, obj) {
			return nil
		}
		return send(redacted(obj))
	})
}
