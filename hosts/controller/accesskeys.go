package controller

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/internal/store"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// accessKeys keeps the hashes of the keys the resource managers of
// crm_on_edge cloudlets authenticate with, under
// /edgekit/<region>/CloudletAccessKey/<cloudlet key>. The keys themselves
// are shown once, to the creator of the cloudlet, and never stored.
type accessKeys struct {
	s      *store.Store
	prefix string
}

func newAccessKeys(s *store.Store) *accessKeys {
	return &accessKeys{s: s, prefix: s.Prefix() + "CloudletAccessKey/"}
}

func (a *accessKeys) path(key *edgeproto.CloudletKey) string {
	return a.prefix + cloudletKeyString(key)
}

func hashKey(key string) string {
	h := sha256.Sum256([]byte(key))
	return "sha256:" + hex.EncodeToString(h[:])
}

// issue makes a new access key for the cloudlet, stores its hash in tx and
// returns the key.
func (a *accessKeys) issue(tx *store.Tx, key *edgeproto.CloudletKey) (string, error) {
	tok, err := NewToken()
	if err != nil {
		return "", err
	}
	tx.Put(a.path(key), hashKey(tok))
	return tok, nil
}

// SeedAccessKey buffers in tx the hash of key as the access key of the
// crm_on_edge cloudlet of that key, in the store s: for loading a region in
// bulk (benchmarks and tests that need many cloudlets fast). The API issues
// keys with CreateCloudlet and RotateCloudletAccessKey.
func SeedAccessKey(s *store.Store, tx *store.Tx, cloudlet *edgeproto.CloudletKey, key string) {
	tx.Put(newAccessKeys(s).path(cloudlet), hashKey(key))
}

// remove deletes the cloudlet's key hash in tx.
func (a *accessKeys) remove(tx *store.Tx, key *edgeproto.CloudletKey) { tx.Delete(a.path(key)) }

// matches reports whether stored (a hash read from the store) is the hash
// of presented, in constant time.
func keyMatches(stored, presented string) bool {
	return subtle.ConstantTimeCompare([]byte(stored), []byte(hashKey(presented))) == 1
}

// ErrBadAccessKey says that a cloudlet access key is wrong, or that the
// cloudlet has none (it does not exist or its resource manager is not on
// the edge site). It does not say which.
var ErrBadAccessKey = errors.New("bad cloudlet access key")

// VerifyAccessKey checks the key a cloudlet's resource manager presents.
func (c *Controller) VerifyAccessKey(ctx context.Context, cloudlet *edgeproto.CloudletKey, key string) error {
	resp, err := c.store.Client().Get(ctx, c.accessKeys.path(cloudlet))
	if err != nil {
		return fmt.Errorf("access key: %w", err)
	}
	if len(resp.Kvs) == 0 || !keyMatches(string(resp.Kvs[0].Value), key) {
		return ErrBadAccessKey
	}
	return nil
}

// RotateAccessKey issues a new access key for a crm_on_edge cloudlet and
// returns it; the old key stops working at once. The caller must own the
// cloudlet.
func (c *Controller) RotateAccessKey(ctx context.Context, cloudlet *edgeproto.CloudletKey) (string, error) {
	probe := &edgeproto.Cloudlet{Key: cloudlet}
	if err := authorize(ctx, c.cloudlets.kind, probe, false); err != nil {
		return "", err
	}
	var key string
	_, err := c.store.Txn(ctx, func(tx *store.Tx) error {
		cl, found, err := c.cloudlets.store.TxGet(tx, probe.GetKeyString())
		if err != nil {
			return err
		}
		if !found {
			return status.Errorf(codes.NotFound, "Cloudlet %s not found", probe.GetKeyString())
		}
		if !cl.CrmOnEdge {
			return preconditionf("Cloudlet %s has no resource manager on the edge site: it has no access key", probe.GetKeyString())
		}
		key, err = c.accessKeys.issue(tx, cloudlet)
		return err
	})
	if err != nil {
		return "", apiError(err)
	}
	return key, nil
}
