package store

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"
	"unicode"

	"go.etcd.io/etcd/api/v3/mvccpb"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/edgekit/edgekit/atrest"
)

// Root is the first element of every key the store writes.
const Root = "/edgekit/"

// Defaults of the options.
const (
	DefaultMaxAttempts = 16
	DefaultPageSize    = 1000
)

// Store is the typed store of one region on an etcd client. It is safe for
// concurrent use. Closing the client is the caller's business.
type Store struct {
	client      *clientv3.Client
	region      string
	prefix      string
	logger      *slog.Logger
	observer    Observer
	maxAttempts int
	pageSize    int64
	recentSize  int

	// env seals the values of sensitive kinds (see WithEncryption); nil
	// stores every value in clear.
	env *atrest.Envelope

	// sinks are the running caches, told of every committed write of a
	// transaction (see cache_write.go).
	sinkMu sync.RWMutex
	sinks  []writeSink

	mu        sync.Mutex
	kinds     map[string]string // kind name -> full proto name
	sensitive map[string]bool   // kind names whose values are sealed
}

// Option configures a Store.
type Option func(*Store)

// WithLogger sets the logger of the store and its caches (default: none).
func WithLogger(l *slog.Logger) Option { return func(s *Store) { s.logger = l } }

// WithObserver sets the observer told about every operation, for metrics.
func WithObserver(o Observer) Option { return func(s *Store) { s.observer = o } }

// WithMaxAttempts bounds the attempts of a compare-and-swap loop or a
// transaction before it fails with ErrConflict (default
// DefaultMaxAttempts; at least 1).
func WithMaxAttempts(n int) Option { return func(s *Store) { s.maxAttempts = max(n, 1) } }

// WithPageSize sets how many keys one request of a List reads (default
// DefaultPageSize; at least 1).
func WithPageSize(n int) Option { return func(s *Store) { s.pageSize = int64(max(n, 1)) } }

// WithRecentSize sets how many objects per kind the store remembers as
// last read or written by this process (default DefaultRecentSize; 0
// turns it off). Update, Modify and Delete with a check start from a
// remembered object instead of reading it: one request instead of two when
// no other process wrote the object since. Correctness does not depend on
// it: the compare-and-swap checks the object's revision either way.
func WithRecentSize(n int) Option { return func(s *Store) { s.recentSize = max(n, 0) } }

// WithEncryption seals, with env, the value of every object whose message
// type has a debug_redact field at any depth (App, Cloudlet, the FLUIDOS
// contracts...): the whole protojson value is encrypted, bound to its etcd
// key. Values of other kinds stay readable protojson. Values written in
// clear before (legacy) are read as they are and sealed on their next
// write, or by Rewrap. Without this option a sealed value does not decode:
// an ErrBadValue naming its key.
func WithEncryption(env *atrest.Envelope) Option { return func(s *Store) { s.env = env } }

// Observation describes one finished operation of the store.
type Observation struct {
	Op       string        // "get", "list", "create", "put", "update", "modify", "delete", "txn"
	Kind     string        // the kind's name, or "" for a transaction
	Duration time.Duration // from call to return
	// Attempts is how many times a compare-and-swap or transaction ran (1
	// without conflicts; 0 for operations that do not retry).
	Attempts int
	Err      error // the operation's error, or nil
}

// Observer is told about every operation the store finishes; metrics feed
// on it. It must be quick and safe for concurrent use.
type Observer interface {
	Observe(Observation)
}

// ObserverFunc adapts a function to Observer.
type ObserverFunc func(Observation)

// Observe calls f(o).
func (f ObserverFunc) Observe(o Observation) { f(o) }

var _ Observer = ObserverFunc(nil)

// New returns the store of region on client. The region names a key
// prefix: it must be non-empty printable text without '/'.
func New(client *clientv3.Client, region string, opts ...Option) (*Store, error) {
	if client == nil {
		return nil, errors.New("store: nil etcd client")
	}
	if err := checkName("region", region); err != nil {
		return nil, err
	}
	s := &Store{
		client:      client,
		region:      region,
		prefix:      Root + region + "/",
		maxAttempts: DefaultMaxAttempts,
		pageSize:    DefaultPageSize,
		recentSize:  DefaultRecentSize,
		kinds:       map[string]string{},
		sensitive:   map[string]bool{},
	}
	for _, o := range opts {
		o(s)
	}
	if s.logger == nil {
		s.logger = slog.New(slog.DiscardHandler)
	}
	return s, nil
}

func checkName(what, name string) error {
	if name == "" {
		return fmt.Errorf("store: empty %s", what)
	}
	if strings.IndexFunc(name, func(r rune) bool { return r == '/' || !unicode.IsPrint(r) || unicode.IsSpace(r) }) >= 0 {
		return fmt.Errorf("store: %s %q: want printable text without '/' or spaces", what, name)
	}
	return nil
}

// Client returns the store's etcd client.
func (s *Store) Client() *clientv3.Client { return s.client }

// Region returns the store's region.
func (s *Store) Region() string { return s.region }

// Prefix returns the prefix of every key of the store: "/edgekit/<region>/".
func (s *Store) Prefix() string { return s.prefix }

// Logger returns the store's logger.
func (s *Store) Logger() *slog.Logger { return s.logger }

// observe reports an operation that started at start.
func (s *Store) observe(op, kind string, start time.Time, attempts int, err error) {
	if s.observer != nil {
		s.observer.Observe(Observation{Op: op, Kind: kind, Duration: time.Since(start), Attempts: attempts, Err: err})
	}
}

// Encrypted reports whether the store seals the values of sensitive kinds.
func (s *Store) Encrypted() bool { return s.env != nil }

// register records a kind's name, refusing a second message type under
// the same name, and whether its values are sealed.
func (s *Store) register(name, full string, sensitive bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if prev, ok := s.kinds[name]; ok && prev != full {
		return fmt.Errorf("store: kind name %q is taken by %s; give %s another name with KindName", name, prev, full)
	}
	s.kinds[name] = full
	if sensitive {
		s.sensitive[name] = true
	}
	return nil
}

// getKV reads one key; nil when it does not exist.
func (s *Store) getKV(ctx context.Context, key string, opts ...clientv3.OpOption) (*mvccpb.KeyValue, int64, error) {
	resp, err := s.client.Get(ctx, key, opts...)
	if err != nil {
		return nil, 0, err
	}
	if len(resp.Kvs) == 0 {
		return nil, resp.Header.Revision, nil
	}
	return resp.Kvs[0], resp.Header.Revision, nil
}

// rangePrefix calls fn for every key under prefix in key order, all read
// at one revision, which it returns. It reads pageSize keys per request.
// When rev is 0 it reads the newest revision. A compaction of that
// revision while reading is an error matching rpctypes.ErrCompacted.
func (s *Store) rangePrefix(ctx context.Context, prefix string, rev int64, fn func(*mvccpb.KeyValue) error) (int64, error) {
	end := clientv3.GetPrefixRangeEnd(prefix)
	key := prefix
	for {
		opts := []clientv3.OpOption{clientv3.WithRange(end), clientv3.WithLimit(s.pageSize)}
		if rev != 0 {
			opts = append(opts, clientv3.WithRev(rev))
		}
		resp, err := s.client.Get(ctx, key, opts...)
		if err != nil {
			return 0, err
		}
		if rev == 0 {
			rev = resp.Header.Revision
		}
		for _, kv := range resp.Kvs {
			if err := fn(kv); err != nil {
				return 0, err
			}
		}
		if !resp.More || len(resp.Kvs) == 0 {
			return rev, nil
		}
		key = string(resp.Kvs[len(resp.Kvs)-1].Key) + "\x00"
	}
}

// isCompacted reports whether err is etcd's error for a compacted revision.
func isCompacted(err error) bool {
	return errors.Is(err, rpctypes.ErrCompacted)
}
