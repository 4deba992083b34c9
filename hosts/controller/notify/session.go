package notify

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"sync"
	"time"

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/internal/notify"
	notifyv1 "github.com/edgekit/edgekit/proto/edgekit/notify/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"
)

type stream = grpc.BidiStreamingServer[notifyv1.ConnectRequest, notifyv1.ConnectResponse]

// session is one CRM's stream.
type session struct {
	srv      *Server
	ctx      context.Context
	cancel   context.CancelCauseFunc
	stream   stream
	cloudlet *edgeproto.CloudletKey
	ck       string
	log      *slog.Logger
	q        *notify.Queue[*notifyv1.ConnectResponse]
	routes   []string // the routing keys the hub hands changes by
	hub      *hub     // the hub the session joined
	resumeAt int64    // the Hello's resume_revision
	// endSync releases the session's admission slot; the sender calls it
	// once the SyncEnd is sent.
	endSync func()

	// mu guards what the hub's goroutine and the session's share.
	mu      sync.Mutex
	scope   *scope
	live    bool     // the initial sync is queued: changes go to the queue
	pending []*event // changes handed before that, in revision order
	from    int64    // changes up to this revision are in the initial sync
}

func newSession(srv *Server, ctx context.Context, cancel context.CancelCauseFunc, st stream, cloudlet *edgeproto.CloudletKey, log *slog.Logger) *session {
	return &session{srv: srv, ctx: ctx, cancel: cancel, stream: st, cloudlet: cloudlet, ck: cloudletKeyString(cloudlet),
		log: log, q: notify.NewQueue[*notifyv1.ConnectResponse](srv.cfg.MaxQueue), routes: sessionRoutes(cloudlet), scope: newScope(cloudlet)}
}

var (
	errClosed    = status.Error(codes.Canceled, "the CRM closed the stream")
	errQueueFull = status.Error(codes.ResourceExhausted, "the CRM reads too slowly: its send queue is full; connect again to resynchronise")
	errKeyGone   = status.Error(codes.Unauthenticated, "the cloudlet's access key changed or was removed")
)

// run serves the session until it ends and returns why it ended.
func (s *session) run() error {
	start := time.Now()
	sl, err := s.srv.adm.acquireSlot(s.ctx)
	if err != nil {
		if s.ctx.Err() != nil {
			return s.reason()
		}
		s.srv.metrics.refused.WithLabelValues("busy").Inc()
		return err
	}
	s.endSync = sl.release
	defer sl.release()
	// Joined first, so that every change after the hub's revision reaches
	// the session; those the initial sync already holds are skipped.
	h, err := s.srv.join(s)
	if err != nil {
		return err
	}
	sl.restartClock() // the hub's start is not the sync's pace
	s.hub = h
	defer s.srv.leave(h, s)
	rev, n, resumed, err := s.initialSync()
	if err != nil {
		return status.Errorf(codes.Unavailable, "initial sync: %v", err)
	}
	s.goLive(rev)
	s.log.LogAttrs(s.ctx, slog.LevelDebug, "initial sync queued", slog.Int64("revision", rev), slog.Int("objects", n),
		slog.Bool("resumed", resumed))
	// The receiver and the sender may be blocked in the stream (a CRM that
	// stopped reading holds a Send until flow control gives way): they end
	// when the handler returns and the stream with it.
	go s.receive()
	go func() { s.cancel(s.send(start)) }()
	<-s.ctx.Done()
	return s.reason()
}

// reason is the status the stream ends with.
func (s *session) reason() error {
	cause := context.Cause(s.ctx)
	if errors.Is(cause, errClosed) {
		return nil
	}
	if _, ok := status.FromError(cause); ok && cause != nil && !errors.Is(cause, context.Canceled) {
		return cause
	}
	return status.FromContextError(cause).Err()
}

// put queues changes; a full queue ends the session.
func (s *session) put(pinned bool, changes ...change) bool {
	for _, c := range changes {
		u, err := notify.UpdateOf(c.action, c.rev, c.obj)
		if err != nil { // a kind the protocol does not carry: a programming error
			s.log.LogAttrs(s.ctx, slog.LevelError, "cannot send object", slog.String("key", c.key), slog.Any("error", err))
			continue
		}
		if err := s.q.Put(c.key, &notifyv1.ConnectResponse{Msg: &notifyv1.ConnectResponse_Update{Update: u}}, pinned); err != nil {
			s.srv.metrics.queueFull.Inc()
			s.cancel(errQueueFull)
			return false
		}
	}
	return true
}

// initialSync queues what the CRM lacks: what changed since the Hello's
// resume revision when it names one the store still has, everything
// otherwise.
func (s *session) initialSync() (rev int64, n int, resumed bool, err error) {
	if s.resumeAt > 0 {
		rev, n, err = s.resume(s.resumeAt)
		if err == nil {
			return rev, n, true, nil
		}
		if !errors.Is(err, errNoResume) {
			return 0, 0, false, err
		}
		s.log.LogAttrs(s.ctx, slog.LevelInfo, "full sync instead of a resumed one", slog.Any("reason", err))
		s.scope = newScope(s.cloudlet)
	}
	rev, n, err = s.sync()
	return rev, n, false, err
}

// sync reads what the CRM needs at one revision and queues it between a
// SyncStart and a SyncEnd; it returns the revision and how many objects it
// queued. It reads the revision the hub reached, and of the kinds placed on
// cloudlets only the objects the hub places on the session's cloudlet, so
// that a sync costs what the cloudlet holds, not what the region does.
func (s *session) sync() (int64, int, error) {
	if err := s.catchUp(); err != nil {
		return 0, 0, err
	}
	rev, on := s.hub.onCloudlet(s.ck)
	objs, err := s.readScoped(s.ctx, rev, on)
	if err != nil {
		return 0, 0, err
	}
	if !hasCloudlet(objs, s.srv.kinds, s.ck) {
		return 0, 0, errCloudletGone(s.ck)
	}
	ka := durationpb.New(s.srv.cfg.KeepaliveInterval)
	if err := s.q.Put("", &notifyv1.ConnectResponse{Msg: &notifyv1.ConnectResponse_SyncStart{
		SyncStart: &notifyv1.SyncStart{Revision: rev, KeepaliveInterval: ka}}}, true); err != nil {
		return 0, 0, errQueueFull
	}
	var changes []change
	for _, o := range objs {
		changes = append(changes, feed(s.scope, o, rev)...)
	}
	if !s.put(true, changes...) {
		return 0, 0, errQueueFull
	}
	if err := s.q.Put("", &notifyv1.ConnectResponse{Msg: &notifyv1.ConnectResponse_SyncEnd{
		SyncEnd: &notifyv1.SyncEnd{Revision: rev, Objects: uint32(len(changes))}}}, true); err != nil {
		return 0, 0, errQueueFull
	}
	return rev, len(changes), nil
}

// hubCatchUpTimeout bounds the wait for the hub to reach the revision of
// the session's cloudlet.
const hubCatchUpTimeout = 10 * time.Second

// catchUp waits until the hub has dispatched the last change of the
// session's cloudlet, so that a sync at the hub's revision sees the
// cloudlet as the CRM's Hello did (a cloudlet created just before its CRM
// connects, while the hub's watch lags).
func (s *session) catchUp() error {
	resp, err := s.srv.cfg.Store.Client().Get(s.ctx, s.srv.kinds.cloudlets.Path(s.ck))
	if err != nil {
		return err
	}
	if len(resp.Kvs) == 0 {
		return errCloudletGone(s.ck)
	}
	return s.hub.waitRev(s.ctx, resp.Kvs[0].ModRevision, hubCatchUpTimeout)
}

// deliver is how the hub hands the session a change it concerns: queued
// once the initial sync is, kept until then (at most Config.MaxQueue
// changes: past that the session ends as a full queue does).
func (s *session) deliver(e *event) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ctx.Err() != nil {
		return
	}
	if s.live {
		s.apply(e)
		return
	}
	if len(s.pending) >= s.srv.cfg.MaxQueue {
		s.srv.metrics.queueFull.Inc()
		s.cancel(errQueueFull)
		return
	}
	s.pending = append(s.pending, e)
}

// goLive queues the changes handed during the initial sync of revision
// rev that are past it, and from then on every change as it comes.
func (s *session) goLive(rev int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.from = rev
	for _, e := range s.pending {
		if s.ctx.Err() != nil {
			break
		}
		s.apply(e)
	}
	s.pending, s.live = nil, true
}

// apply queues what one change means to the CRM; s.mu is held.
func (s *session) apply(e *event) {
	if e.rev <= s.from {
		return
	}
	switch {
	case e.kind == accessKeyKind:
		if e.key == s.ck {
			s.cancel(errKeyGone)
		}
	case e.kind == settingsName:
		s.put(false, s.scope.putChange(settingsName, "", e.obj, e.rev))
	case e.d == nil:
	case e.del:
		s.put(false, s.scope.remove(e.d, e.key, e.rev)...)
	default:
		s.put(false, s.scope.put(e.d, e.key, e.obj, e.rev)...)
	}
}

// send sends the queue's items, and a Keepalive whenever there was nothing
// to send for the keepalive interval, until the session ends or a send
// fails.
func (s *session) send(start time.Time) error {
	interval := s.srv.cfg.KeepaliveInterval
	t := time.NewTimer(interval)
	defer t.Stop()
	keepalive := &notifyv1.ConnectResponse{Msg: &notifyv1.ConnectResponse_Keepalive{Keepalive: &notifyv1.Keepalive{}}}
	for {
		m, ok := s.q.TryPop()
		if !ok {
			select {
			case <-s.q.Ready():
				continue
			case <-t.C:
				m = keepalive
			case <-s.ctx.Done():
				return context.Cause(s.ctx)
			}
		}
		if err := s.stream.Send(m); err != nil {
			return err
		}
		s.srv.metrics.sent(m)
		if m.GetSyncEnd() != nil {
			s.endSync()
			s.srv.metrics.syncSeconds.Observe(time.Since(start).Seconds())
			s.log.LogAttrs(s.ctx, slog.LevelInfo, "initial sync sent", slog.Int64("revision", m.GetSyncEnd().GetRevision()),
				slog.Uint64("objects", uint64(m.GetSyncEnd().GetObjects())), slog.Duration("took", time.Since(start)))
		}
		if !t.Stop() {
			select {
			case <-t.C:
			default:
			}
		}
		t.Reset(interval)
	}
}

// receive reads the CRM's reports until the stream ends.
func (s *session) receive() {
	w := newReportWorkers(s)
	defer w.close()
	for {
		m, err := s.stream.Recv()
		if err != nil {
			if errors.Is(err, io.EOF) {
				s.cancel(errClosed)
			} else {
				s.cancel(err)
			}
			return
		}
		r := m.GetReport()
		if r == nil {
			s.cancel(status.Error(codes.InvalidArgument, "after the Hello a CRM sends only Reports"))
			return
		}
		if !w.dispatch(r) {
			return
		}
	}
}
