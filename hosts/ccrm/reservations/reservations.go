// Package reservations keeps executor.Reservations in etcd, so that every
// CCRM replica hands platforms the same reservation tables and no value is
// handed out twice, whichever replica runs an operation.
//
// # Layout
//
// Every reserved value is one key, its owner the value:
//
//	<prefix><cloudlet>/<kind>/<value> = <owner>
//
// where prefix is the region's store prefix followed by
// "ccrm/reservations/". A cloudlet name and a kind must not contain '/';
// a value may (a subnet such as 10.0.1.0/24).
//
// # Updates
//
// Update reads the cloudlet's table at one revision, runs fn on it, and
// commits what fn changed in one etcd transaction that compares exactly
// what fn looked at: every value it asked the owner of is unchanged (or
// still free), and no value of a kind it listed (Values, Release) was
// added or changed. When the compare fails fn runs again on a fresh read,
// after a short jittered pause, up to Options.MaxAttempts times, then
// Update fails with executor.ErrConflict. Updates of one cloudlet are
// serialised within a process, so conflicts arise only between processes.
// A commit holds at most etcd's limit of operations per transaction (128
// by default) of changes.
//
// # Garbage collection
//
// Collect deletes the values whose owner no longer exists: owners named as
// executor.OwnerOf names them ("ClusterInst:<key>", "AppInst:<key>",
// "Cloudlet:<key>") whose object is absent from the store. Each delete is
// one transaction that also checks that the value is unchanged and that
// the owner's object is still absent, so a value reserved again meanwhile,
// or an owner created meanwhile, is never collected. Owners of other forms
// are left alone.
package reservations

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"strings"
	"sync"
	"time"

	"github.com/edgekit/edgekit/executor"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// Prefix is where reservations live under a region's store prefix.
const Prefix = "ccrm/reservations/"

// DefaultMaxAttempts bounds the runs of an update function.
const DefaultMaxAttempts = 64

// Options configure Reservations.
type Options struct {
	// MaxAttempts bounds the runs of an update function when other
	// processes keep changing what it read; 0 means DefaultMaxAttempts.
	MaxAttempts int
	// Logger receives logs; nil discards them.
	Logger *slog.Logger
}

// Reservations is executor.Reservations on etcd. It is safe for
// concurrent use, also by several processes.
type Reservations struct {
	cli         *clientv3.Client
	prefix      string
	maxAttempts int
	log         *slog.Logger

	mu    sync.Mutex
	locks map[string]*sync.Mutex
}

var _ executor.Reservations = (*Reservations)(nil)

// New returns the reservations kept under prefix (a region's store prefix
// followed by Prefix, "/edgekit/<region>/ccrm/reservations/").
func New(cli *clientv3.Client, prefix string, o Options) (*Reservations, error) {
	if cli == nil {
		return nil, errors.New("reservations: nil etcd client")
	}
	if prefix == "" || !strings.HasSuffix(prefix, "/") {
		return nil, fmt.Errorf("reservations: prefix %q must end with '/'", prefix)
	}
	if o.MaxAttempts <= 0 {
		o.MaxAttempts = DefaultMaxAttempts
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return &Reservations{cli: cli, prefix: prefix, maxAttempts: o.MaxAttempts, log: o.Logger, locks: map[string]*sync.Mutex{}}, nil
}

func (r *Reservations) lockFor(cloudlet string) *sync.Mutex {
	r.mu.Lock()
	defer r.mu.Unlock()
	l := r.locks[cloudlet]
	if l == nil {
		l = &sync.Mutex{}
		r.locks[cloudlet] = l
	}
	return l
}

// Update implements executor.Reservations.
func (r *Reservations) Update(ctx context.Context, cloudlet string, fn func(set executor.ReservationSet) error) error {
	if cloudlet == "" || strings.Contains(cloudlet, "/") {
		return fmt.Errorf("reservations: cloudlet name %q: want non-empty text without '/'", cloudlet)
	}
	l := r.lockFor(cloudlet)
	l.Lock()
	defer l.Unlock()
	base := r.prefix + cloudlet + "/"
	for attempt := 1; ; attempt++ {
		resp, err := r.cli.Get(ctx, base, clientv3.WithPrefix())
		if err != nil {
			return fmt.Errorf("reservations of cloudlet %s: %w", cloudlet, err)
		}
		s := newSet(base, resp)
		if err := fn(s); err != nil {
			return err
		}
		if err := s.err; err != nil {
			return err
		}
		if len(s.changes) == 0 {
			return nil
		}
		tr, err := r.cli.Txn(ctx).If(s.compares()...).Then(s.ops()...).Commit()
		if err != nil {
			return fmt.Errorf("reservations of cloudlet %s: %w", cloudlet, err)
		}
		if tr.Succeeded {
			return nil
		}
		if attempt >= r.maxAttempts {
			return fmt.Errorf("reservations of cloudlet %s: %w after %d attempts", cloudlet, executor.ErrConflict, attempt)
		}
		// Another process won: pause a little, longer as it goes on, with
		// jitter so that contenders do not retry in step.
		d := time.Duration(min(attempt, 10)) * time.Millisecond
		t := time.NewTimer(d/2 + rand.N(d))
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		}
	}
}

// Snapshot returns the reservations of a cloudlet: kind -> value -> owner.
func (r *Reservations) Snapshot(ctx context.Context, cloudlet string) (map[string]map[string]string, error) {
	resp, err := r.cli.Get(ctx, r.prefix+cloudlet+"/", clientv3.WithPrefix())
	if err != nil {
		return nil, fmt.Errorf("reservations of cloudlet %s: %w", cloudlet, err)
	}
	out := map[string]map[string]string{}
	for k, e := range newSet(r.prefix+cloudlet+"/", resp).base {
		if out[k.kind] == nil {
			out[k.kind] = map[string]string{}
		}
		out[k.kind][k.value] = e.owner
	}
	return out, nil
}
