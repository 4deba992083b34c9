package controller

import (
	"strings"

	"github.com/edgekit/edgekit/internal/store"
)

// Ref keys record which objects depend on which, so that a delete checks
// only the dependents of what it deletes instead of listing a whole kind:
//
//	/edgekit/<region>/refs/<ParentKind>/<parent key>/<ChildKind>/<child key>
//
// A child's create writes its refs in the transaction that creates it, and
// the removal of the child deletes them. A parent's delete lists its own
// refs prefix inside its transaction: a child created meanwhile writes
// under that prefix, so one of the two transactions re-runs and sees the
// other (a prefix guard detects keys created under it). Nothing else
// conflicts with the delete, however busy the other objects are.
type ref struct{ kind, key string }

// refSegment escapes the only byte of a key string that would split a path
// segment ('%' is itself escaped in key strings, so "%2F" is unambiguous).
func refSegment(key string) string { return strings.ReplaceAll(key, "/", "%2F") }

func (c *Controller) refPrefix(parent ref) string {
	return c.store.Prefix() + "refs/" + parent.kind + "/" + refSegment(parent.key) + "/"
}

func (c *Controller) refPath(parent, child ref) string {
	return c.refPrefix(parent) + child.kind + "/" + refSegment(child.key)
}

// putRefs records in tx that child depends on each parent (parents with an
// empty key are skipped).
func (c *Controller) putRefs(tx *store.Tx, child ref, parents ...ref) {
	for _, p := range parents {
		if p.key != "" {
			tx.Put(c.refPath(p, child), child.kind+" "+child.key)
		}
	}
}

// dropRefs removes in tx the records that child depends on parents.
func (c *Controller) dropRefs(tx *store.Tx, child ref, parents ...ref) {
	for _, p := range parents {
		if p.key != "" {
			tx.Delete(c.refPath(p, child))
		}
	}
}

// dependent returns, read in tx, one object that depends on parent
// ("ClusterInst name=c1,organization=dev"), or "" when none does.
func (c *Controller) dependent(tx *store.Tx, parent ref) (string, error) {
	kvs, err := tx.List(c.refPrefix(parent))
	if err != nil || len(kvs) == 0 {
		return "", err
	}
	return string(kvs[0].Value), nil
}
