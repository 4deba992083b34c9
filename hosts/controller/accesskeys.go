package controller

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/internal/store"
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

// remove deletes the cloudlet's key hash in tx.
func (a *accessKeys) remove(tx *store.Tx, key *edgeproto.CloudletKey) { tx.Delete(a.path(key)) }

// matches reports whether stored (a hash read from the store) is the hash
// of presented, in constant time.
func keyMatches(stored, presented string) bool {
	return subtle.ConstantTimeCompare([]byte(stored), []byte(hashKey(presented))) == 1
}
