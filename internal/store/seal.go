package store

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/descriptorpb"

	"github.com/edgekit/edgekit/atrest"
)

// redactedTypes caches hasRedacted by message full name.
var redactedTypes sync.Map // protoreflect.FullName -> bool

// hasRedacted reports whether a message type has a field marked
// debug_redact at any depth (in sub-messages, lists and map values).
func hasRedacted(md protoreflect.MessageDescriptor) bool {
	if v, ok := redactedTypes.Load(md.FullName()); ok {
		return v.(bool)
	}
	r := redactedIn(md, map[protoreflect.FullName]bool{})
	redactedTypes.Store(md.FullName(), r)
	return r
}

func redactedIn(md protoreflect.MessageDescriptor, seen map[protoreflect.FullName]bool) bool {
	if seen[md.FullName()] {
		return false
	}
	seen[md.FullName()] = true
	fields := md.Fields()
	for i := range fields.Len() {
		fd := fields.Get(i)
		if o, ok := fd.Options().(*descriptorpb.FieldOptions); ok && o.GetDebugRedact() {
			return true
		}
		if fd.IsMap() {
			fd = fd.MapValue()
		}
		if fd.Message() != nil && redactedIn(fd.Message(), seen) {
			return true
		}
	}
	return false
}

// open decrypts a sealed value stored under path.
func (s *Store) open(path string, data []byte) ([]byte, error) {
	if s.env == nil {
		return nil, fmt.Errorf("%w: the value is encrypted and the store was given no key (give the key file)", atrest.ErrUndecryptable)
	}
	return s.env.Open(data, []byte(path))
}

// Plaintext is a value as stored under the etcd key path, opened when it
// is sealed and returned as it is otherwise: what a tool that reads etcd
// directly (a backup check, a test) sees through the store's key.
func (s *Store) Plaintext(path string, value []byte) ([]byte, error) {
	if !atrest.IsSealed(value) {
		return value, nil
	}
	b, err := s.open(path, value)
	if err != nil {
		return nil, fmt.Errorf("store: %s: %w", path, err)
	}
	return b, nil
}

// RewrapStats counts what Rewrap or KeyUsage saw.
type RewrapStats struct {
	// Scanned is how many keys were read.
	Scanned int
	// Rewrapped is how many values Rewrap wrote again under the current
	// key-encryption key (legacy plaintext values of sensitive kinds, and
	// values sealed with another key).
	Rewrapped int
	// Current is how many sealed values already used the current key.
	Current int
	// ByKey counts the sealed values by key-encryption key id as found
	// (before Rewrap rewrote them); "" counts legacy plaintext values of
	// sensitive kinds.
	ByKey map[string]int
	// LastKey is the last etcd key done: give it as RewrapOptions.After
	// to resume.
	LastKey string
}

// RewrapOptions tune Rewrap.
type RewrapOptions struct {
	// After resumes after this etcd key (exclusive); "" starts at the
	// store's first key.
	After string
	// Progress, when set, is called after every page of keys.
	Progress func(RewrapStats)
	// DryRun counts without writing (KeyUsage).
	DryRun bool
}

// Rewrap writes again, sealed with the current key-encryption key, every
// value of the store that is not: values sealed with an older key, and
// legacy plaintext values of sensitive kinds (those registered with
// NewKind in this store; create every kind before calling it). Values are
// re-encrypted as they are, without decoding them as their kind.
//
// It walks the store's keys in order, a page at a time, each at the newest
// revision, and rewrites each value with a compare-and-swap on its
// ModRevision: a concurrent write wins, and the value is read again and
// rewrapped when it still needs it; values written meanwhile by a process
// holding the current key need nothing. It is idempotent and resumable
// (RewrapOptions.After, RewrapStats.LastKey). A value that does not open
// (its key is not in the keyring) stops it with an error naming the key.
func (s *Store) Rewrap(ctx context.Context, opts RewrapOptions) (RewrapStats, error) {
	st := RewrapStats{ByKey: map[string]int{}, LastKey: opts.After}
	if s.env == nil {
		return st, errors.New("store: rewrap: the store has no encryption key")
	}
	cur, err := s.env.CurrentKeyID()
	if err != nil {
		return st, fmt.Errorf("store: rewrap: %w", err)
	}
	end := clientv3.GetPrefixRangeEnd(s.prefix)
	from := s.prefix
	if opts.After != "" {
		from = opts.After + "\x00"
	}
	for {
		resp, err := s.client.Get(ctx, from, clientv3.WithRange(end), clientv3.WithLimit(s.pageSize))
		if err != nil {
			return st, fmt.Errorf("store: rewrap after %q: %w", st.LastKey, err)
		}
		for _, kv := range resp.Kvs {
			st.Scanned++
			if err := s.rewrapOne(ctx, kv, cur, opts.DryRun, &st); err != nil {
				return st, err
			}
			st.LastKey = string(kv.Key)
		}
		if opts.Progress != nil {
			opts.Progress(st)
		}
		if !resp.More || len(resp.Kvs) == 0 {
			return st, nil
		}
		from = string(resp.Kvs[len(resp.Kvs)-1].Key) + "\x00"
	}
}

// needsRewrap tells whether kv must be written again, and counts it.
func (s *Store) needsRewrap(kv *mvccpb.KeyValue, cur string, st *RewrapStats, count bool) (bool, error) {
	path := string(kv.Key)
	if atrest.IsSealed(kv.Value) {
		id, err := atrest.KeyIDOf(kv.Value)
		if err != nil {
			return false, fmt.Errorf("store: rewrap %q: %w", path, err)
		}
		if count {
			st.ByKey[id]++
		}
		if id == cur {
			if count {
				st.Current++
			}
			return false, nil
		}
		return true, nil
	}
	kind, _, _ := strings.Cut(strings.TrimPrefix(path, s.prefix), "/")
	s.mu.Lock()
	sensitive := s.sensitive[kind]
	s.mu.Unlock()
	if sensitive && count {
		st.ByKey[""]++
	}
	return sensitive, nil
}

// rewrapOne rewrites kv under the current key when it needs it.
func (s *Store) rewrapOne(ctx context.Context, kv *mvccpb.KeyValue, cur string, dry bool, st *RewrapStats) error {
	path := string(kv.Key)
	for attempt := 1; ; attempt++ {
		need, err := s.needsRewrap(kv, cur, st, attempt == 1)
		if err != nil || !need || dry {
			return err
		}
		plain := kv.Value
		if atrest.IsSealed(plain) {
			if plain, err = s.env.Open(kv.Value, kv.Key); err != nil {
				return &Error{Op: "rewrap", Key: path, Err: ErrBadValue, Cause: err}
			}
		}
		sealed, err := s.env.Seal(plain, kv.Key)
		if err != nil {
			return &Error{Op: "rewrap", Key: path, Err: ErrSeal, Cause: err}
		}
		resp, err := s.client.Txn(ctx).
			If(clientv3.Compare(clientv3.ModRevision(path), "=", kv.ModRevision)).
			Then(clientv3.OpPut(path, string(sealed))).
			Else(clientv3.OpGet(path)).
			Commit()
		if err != nil {
			if e := noSpace("rewrap", "", path, err); e != nil {
				return e
			}
			return fmt.Errorf("store: rewrap %q: %w", path, err)
		}
		if resp.Succeeded {
			st.Rewrapped++
			return nil
		}
		if kv = elseKV(resp); kv == nil {
			return nil // deleted meanwhile
		}
		if attempt >= s.maxAttempts {
			return &Error{Op: "rewrap", Key: path, Err: ErrConflict}
		}
	}
}

// KeyUsage counts the store's sealed values by key-encryption key id, and
// its legacy plaintext values of sensitive kinds under "": a key can be
// dropped from the keyring when no value uses it. Like Rewrap, it knows
// the sensitive kinds registered in this store.
func (s *Store) KeyUsage(ctx context.Context) (map[string]int, error) {
	st, err := s.Rewrap(ctx, RewrapOptions{DryRun: true})
	return st.ByKey, err
}

// StartRewrap runs Rewrap in the background, once, when the store
// encrypts: the migration of values written in clear before, and of
// values sealed with an older key after a key was added. It logs what it
// did; an error is logged and left for the rewrap command or the next
// start. stop stops it and waits for it: call it before closing the etcd
// client. Create every kind first.
func (s *Store) StartRewrap(ctx context.Context) (stop func()) {
	if s.env == nil {
		return func() {}
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		st, err := s.Rewrap(ctx, RewrapOptions{})
		switch {
		case err != nil && ctx.Err() == nil:
			s.logger.Error("store: sealing stored values under the current key failed; run the rewrap command",
				"err", err, "rewrapped", st.Rewrapped, "last_key", st.LastKey)
		case err == nil && st.Rewrapped > 0:
			s.logger.Info("store: sealed stored values under the current key", "rewrapped", st.Rewrapped, "scanned", st.Scanned)
		}
	}()
	return func() { cancel(); <-done }
}
