package ccrm

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// ErrSessionExpired says that a session's lease is, or may be, gone: no
// keep-alive was acknowledged within its TTL, or etcd no longer knows it.
var ErrSessionExpired = errors.New("ccrm: session lease expired")

// Session is an etcd lease kept alive, in the manner of etcd's
// concurrency.Session, with one difference that fencing needs: it knows
// until when the lease is certainly alive. Every keep-alive is timed from
// before it is sent, so the lease cannot expire at etcd before the
// session's deadline (etcd renews it on receipt, after the send). Alive
// reports whether the deadline is still ahead, so a holder that was paused
// (SIGSTOP, a long GC, a partition) sees at once on resuming that its
// claims may be gone, without waiting for etcd to tell it.
//
// Done is closed when the session ends: its lease expired or was revoked,
// or Close was called.
type Session struct {
	cli *clientv3.Client
	id  clientv3.LeaseID
	ttl time.Duration
	log *slog.Logger

	mu       sync.Mutex
	deadline time.Time // the lease is alive at etcd at least until then

	done    chan struct{}
	endOnce sync.Once
	err     error
	cancel  context.CancelFunc
	stopped chan struct{}
}

// NewSession grants a lease of ttl (etcd rounds it up to whole seconds and
// to its minimum) and keeps it alive until Close is called or the lease is
// lost. ctx bounds the grant only.
func NewSession(ctx context.Context, cli *clientv3.Client, ttl time.Duration, log *slog.Logger) (*Session, error) {
	if ttl < time.Second {
		return nil, fmt.Errorf("ccrm: lease TTL %v: want at least 1s", ttl)
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	start := time.Now()
	resp, err := cli.Grant(ctx, int64((ttl+time.Second-1)/time.Second))
	if err != nil {
		return nil, fmt.Errorf("ccrm: grant lease: %w", err)
	}
	s := &Session{
		cli: cli, id: resp.ID, ttl: time.Duration(resp.TTL) * time.Second, log: log,
		deadline: start.Add(time.Duration(resp.TTL) * time.Second),
		done:     make(chan struct{}), stopped: make(chan struct{}),
	}
	kctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	s.cancel = cancel
	go s.keepAlive(kctx)
	return s, nil
}

// Lease is the session's lease.
func (s *Session) Lease() clientv3.LeaseID { return s.id }

// TTL is the lease's time to live as granted.
func (s *Session) TTL() time.Duration { return s.ttl }

// Done is closed when the session ended.
func (s *Session) Done() <-chan struct{} { return s.done }

// Err says why the session ended (nil while it runs, and after Close).
func (s *Session) Err() error {
	select {
	case <-s.done:
		return s.err
	default:
		return nil
	}
}

// Alive reports whether the lease is certainly alive now: the session did
// not end and its deadline has not passed.
func (s *Session) Alive() bool {
	select {
	case <-s.done:
		return false
	default:
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return time.Now().Before(s.deadline)
}

// Close ends the session and revokes its lease (so that every key bound to
// it goes at once), with a bounded wait. It is safe to call more than once.
func (s *Session) Close() error {
	s.end(nil)
	<-s.stopped
	ctx, cancel := context.WithTimeout(context.Background(), min(s.ttl, 5*time.Second))
	defer cancel()
	_, err := s.cli.Revoke(ctx, s.id)
	if err != nil && !errors.Is(err, rpctypes.ErrLeaseNotFound) {
		return fmt.Errorf("ccrm: revoke lease %x: %w", int64(s.id), err)
	}
	return nil
}

func (s *Session) end(err error) {
	s.endOnce.Do(func() {
		s.err = err
		close(s.done)
		s.cancel()
	})
}

// keepAlive renews the lease every third of its TTL until the session
// ends. The lease counts as lost when its deadline passes without an
// acknowledged renewal, or when etcd answers that it does not know it.
func (s *Session) keepAlive(ctx context.Context) {
	defer close(s.stopped)
	every := s.ttl / 3
	t := time.NewTimer(every)
	defer t.Stop()
	for {
		s.mu.Lock()
		left := time.Until(s.deadline)
		s.mu.Unlock()
		if left <= 0 {
			s.log.Warn("lease expired: no keep-alive acknowledged within its TTL", slog.String("lease", fmt.Sprintf("%x", int64(s.id))))
			s.end(ErrSessionExpired)
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-time.After(left):
			continue // check the deadline again
		}
		sent := time.Now()
		if !s.Alive() {
			continue // paused past the deadline: the check above ends it
		}
		rctx, cancel := context.WithTimeout(ctx, every)
		resp, err := s.cli.KeepAliveOnce(rctx, s.id)
		cancel()
		switch {
		case errors.Is(err, rpctypes.ErrLeaseNotFound):
			s.end(fmt.Errorf("%w: etcd no longer knows lease %x", ErrSessionExpired, int64(s.id)))
			return
		case err == nil && resp.TTL > 0:
			s.mu.Lock()
			if d := sent.Add(time.Duration(resp.TTL) * time.Second); d.After(s.deadline) {
				s.deadline = d
			}
			s.mu.Unlock()
			t.Reset(every)
		case err == nil:
			s.end(fmt.Errorf("%w: lease %x has no time left", ErrSessionExpired, int64(s.id)))
			return
		default:
			if ctx.Err() != nil {
				return
			}
			s.log.Debug("keep-alive failed", slog.Any("error", err))
			t.Reset(every / 4) // try again soon; the deadline bounds how long
		}
	}
}
