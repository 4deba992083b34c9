package crm

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/executor"
	"github.com/edgekit/edgekit/internal/notify"
	notifyv1 "github.com/edgekit/edgekit/proto/edgekit/notify/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/keepalive"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
)

// errDead ends a stream on which the controller stayed silent too long.
var errDead = errors.New("the controller sent nothing for too long: the stream is taken for dead")

// link keeps a notify stream open until ctx ends.
func (c *CRM) link(ctx context.Context) {
	opts := append([]grpc.DialOption{
		// Find a dead connection even while the stream is idle, and come
		// back quickly once the controller is reachable again.
		grpc.WithKeepaliveParams(keepalive.ClientParameters{Time: 10 * time.Second, Timeout: 5 * time.Second, PermitWithoutStream: true}),
		grpc.WithConnectParams(grpc.ConnectParams{MinConnectTimeout: 5 * time.Second, Backoff: backoff.Config{
			BaseDelay: c.cfg.ReconnectMin, Multiplier: 1.6, Jitter: 0.2, MaxDelay: c.cfg.ReconnectMax}}),
	}, c.cfg.DialOptions...)
	conn, err := grpc.NewClient(c.cfg.Controller, opts...)
	if err != nil { // a malformed address: New cannot tell, the first dial does
		c.log.LogAttrs(ctx, slog.LevelError, "cannot reach the controller", slog.Any("error", err))
		<-ctx.Done()
		return
	}
	defer conn.Close()
	client := notifyv1.NewNotifyServiceClient(conn)
	b := c.backoff()
	for ctx.Err() == nil {
		synced, err := c.stream(ctx, client)
		c.metrics.connected.Set(0)
		c.setDown()
		if ctx.Err() != nil {
			return
		}
		if synced {
			b.Reset()
		}
		end, lvl := "error", slog.LevelWarn
		switch status.Code(err) {
		case codes.Unauthenticated:
			end, lvl = "refused", slog.LevelError
			c.rereadAccessKey(ctx)
		case codes.Aborted:
			end = "replaced"
		case codes.Unavailable:
			end = "unavailable"
		}
		c.metrics.streams.WithLabelValues(end).Inc()
		c.log.LogAttrs(ctx, lvl, "notify stream ended; connecting again", slog.Bool("synced", synced), slog.Any("error", err))
		if hint, ok := notify.RetryAfter(err); ok {
			// The controller is busy synchronising other CRMs and said
			// when to come back.
			if !b.WaitHinted(ctx, hint) {
				return
			}
			continue
		}
		if !b.Wait(ctx) {
			return
		}
	}
}

// stream runs one notify stream until it breaks; synced says whether its
// initial sync ended.
func (c *CRM) stream(ctx context.Context, client notifyv1.NotifyServiceClient) (synced bool, err error) {
	sctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	start := time.Now()
	st, err := client.Connect(sctx)
	if err != nil {
		return false, err
	}
	if err := st.Send(&notifyv1.ConnectRequest{Msg: &notifyv1.ConnectRequest_Hello{Hello: &notifyv1.Hello{
		CloudletKey: c.cfg.Cloudlet, AccessKey: c.cfg.AccessKey, Instance: c.cfg.Instance, ResumeRevision: c.applied}}}); err != nil {
		return false, recvErr(st)
	}
	defer c.out.disconnected()
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel(nil)
	wg.Go(func() {
		if err := c.pump(sctx, st); err != nil {
			cancel(err)
		}
	})
	dead := c.cfg.DeadAfter
	if dead <= 0 {
		dead = DefaultDeadAfter
	}
	watchdog := time.AfterFunc(dead, func() { cancel(errDead) })
	defer watchdog.Stop()
	rs := &resync{}
	for {
		m, err := st.Recv()
		if err != nil {
			if cause := context.Cause(sctx); cause != nil && ctx.Err() == nil {
				return synced, cause
			}
			return synced, err
		}
		watchdog.Reset(dead)
		switch msg := m.GetMsg().(type) {
		case *notifyv1.ConnectResponse_SyncStart:
			rs.start(msg.SyncStart.GetResumed())
			if c.cfg.DeadAfter <= 0 && msg.SyncStart.GetKeepaliveInterval().AsDuration() > 0 {
				dead = 3 * msg.SyncStart.GetKeepaliveInterval().AsDuration()
				watchdog.Reset(dead)
			}
		case *notifyv1.ConnectResponse_Update:
			if err := c.apply(msg.Update, rs); err != nil {
				return synced, err
			}
			if !rs.active && synced {
				c.applied = max(c.applied, msg.Update.GetRevision())
			}
		case *notifyv1.ConnectResponse_SyncEnd:
			c.endSync(ctx, rs)
			synced = true
			c.applied = msg.SyncEnd.GetRevision()
			c.metrics.connected.Set(1)
			c.up()
			c.metrics.syncSeconds.Observe(time.Since(start).Seconds())
			c.log.LogAttrs(ctx, slog.LevelInfo, "synchronised with the controller", slog.Int64("revision", msg.SyncEnd.GetRevision()),
				slog.Uint64("objects", uint64(msg.SyncEnd.GetObjects())), slog.Duration("took", time.Since(start)))
		case *notifyv1.ConnectResponse_ReportAck:
			a := msg.ReportAck
			c.metrics.acks.WithLabelValues(verdictName(a.GetVerdict())).Inc()
			if a.GetVerdict() != notifyv1.Verdict_VERDICT_APPLIED {
				c.log.LogAttrs(ctx, slog.LevelDebug, "report not applied", slog.String("verdict", a.GetVerdict().String()),
					slog.String("reason", a.GetReason()))
			}
			c.out.ack(a.GetSeq(), a.GetVerdict())
		}
	}
}

// recvErr returns the status a stream ended with after a failed Send.
func recvErr(st grpc.BidiStreamingClient[notifyv1.ConnectRequest, notifyv1.ConnectResponse]) error {
	for {
		if _, err := st.Recv(); err != nil {
			return err
		}
	}
}

func verdictName(v notifyv1.Verdict) string {
	switch v {
	case notifyv1.Verdict_VERDICT_APPLIED:
		return "applied"
	case notifyv1.Verdict_VERDICT_REJECTED:
		return "rejected"
	}
	return "failed"
}

// pump sends the outbox's reports until ctx ends or a send fails.
func (c *CRM) pump(ctx context.Context, st grpc.BidiStreamingClient[notifyv1.ConnectRequest, notifyv1.ConnectResponse]) error {
	for {
		r, ok := c.out.next()
		if !ok {
			select {
			case <-c.out.wake:
				continue
			case <-ctx.Done():
				return nil
			}
		}
		if err := st.Send(&notifyv1.ConnectRequest{Msg: &notifyv1.ConnectRequest_Report{Report: r}}); err != nil {
			return fmt.Errorf("sending a report: %w", err)
		}
		c.metrics.reports.Inc()
	}
}

// resync tracks the initial sync of a stream: which objects it sent, and
// whether it sent only what changed since the revision the CRM resumed
// from (then what it did not send is unchanged, not gone).
type resync struct {
	active  bool
	resumed bool
	seen    map[string]bool // "<Kind>/<key>"
}

func (r *resync) start(resumed bool) { r.active, r.resumed, r.seen = true, resumed, map[string]bool{} }

// apply stores one Update in the caches and, outside an initial sync,
// submits what the object asks for.
func (c *CRM) apply(u *notifyv1.Update, rs *resync) error {
	obj, err := notify.ObjectOf(u)
	if err != nil {
		return err
	}
	kind := notify.KindOf(obj)
	c.metrics.updates.WithLabelValues(kind).Inc()
	if s, ok := obj.(*edgeproto.Settings); ok {
		c.objs.settings.Store(s)
		c.engine.SetSettings(s)
		return nil
	}
	k := c.objs.kinds[kind]
	if k == nil {
		return nil
	}
	key := executor.KeyString(obj)
	switch u.GetAction() {
	case notifyv1.UpdateAction_UPDATE_ACTION_PUT:
		k.put(obj)
		if rs.active {
			rs.seen[kind+"/"+key] = true
			return nil
		}
		c.consider(obj, false)
	case notifyv1.UpdateAction_UPDATE_ACTION_DELETE:
		if prev := k.del(key); prev != nil {
			c.removed(prev)
		}
	}
	return nil
}

// consider submits obj's request unless the CRM is stopping.
func (c *CRM) consider(obj proto.Message, resume bool) {
	select {
	case <-c.draining:
		return
	default:
	}
	c.sub.consider(obj, resume)
}

// removed handles an object the controller no longer has.
func (c *CRM) removed(prev proto.Message) {
	select {
	case <-c.draining:
	default:
		c.sub.gone(prev)
	}
	if ik := c.infos.kinds[notify.KindOf(prev)]; ik != nil {
		c.out.objectGone(ik, executor.KeyString(prev))
	}
}

// endSync ends an initial sync: what a full sync did not send is gone;
// then every object's request is submitted. On the first sync of this process the
// cloudlet is initialised (or refreshed when it is settled) and the
// clusters and instances are reconciled with what the platform has (see
// reconcile), which also carries out their requests.
func (c *CRM) endSync(ctx context.Context, rs *resync) {
	first := false
	c.syncedOnce.Do(func() { first = true })
	for _, k := range c.objs.order {
		if rs.resumed {
			break
		}
		for _, key := range k.keys() {
			if !rs.seen[k.name+"/"+key] {
				if prev := k.del(key); prev != nil {
					c.removed(prev)
				}
			}
		}
	}
	rs.active, rs.seen = false, nil
	_, canReconcile := c.cfg.Platform.(executor.InventoryPlatform)
	for _, k := range c.objs.order {
		for _, obj := range k.list() {
			// Reconciliation carries out the requests of clusters and
			// instances; a cloudlet and an exception are submitted.
			_, isCloudlet := obj.(*edgeproto.Cloudlet)
			_, isTPE := obj.(*edgeproto.TrustPolicyException)
			if first && canReconcile && !isCloudlet && !isTPE {
				c.sub.record(obj)
				continue
			}
			c.consider(obj, first)
		}
	}
	if !first {
		return
	}
	for _, cl := range c.objs.cloudlets.List() {
		if _, sig := request(cl, true); sig == "" {
			c.sub.refresh(cl)
		}
		if canReconcile {
			c.bg.Go(func() { c.reconcile(ctx, cl) })
		}
	}
	close(c.synced)
}

// reconcile converges the platform with the controller's view after the
// CRM started: interrupted changes are run again, requests carried out,
// what the platform has and the controller no longer wants (deleted while
// no CRM ran) is removed, leftovers of failed creates undone (see
// executor.Engine.Reconcile).
func (c *CRM) reconcile(ctx context.Context, cl *edgeproto.Cloudlet) {
	start := time.Now()
	res, err := c.engine.Reconcile(ctx, cl)
	attrs := []slog.Attr{slog.Duration("took", time.Since(start))}
	if res != nil {
		for _, a := range []executor.ReconcileAction{executor.ReconcileCreate, executor.ReconcileUpdate, executor.ReconcileDelete,
			executor.ReconcileUndo, executor.ReconcileReport} {
			if n := res.Count(a); n > 0 {
				attrs = append(attrs, slog.Int(string(a), n))
			}
		}
		if err == nil {
			err = res.Err()
		}
	}
	lvl := slog.LevelInfo
	if err != nil {
		lvl = slog.LevelWarn
		attrs = append(attrs, slog.Any("error", err))
	}
	c.log.LogAttrs(ctx, lvl, "start-up reconciliation done", attrs...)
}

// rereadAccessKey reads Config.AccessKeyFile again after the controller
// refused the key, and uses what it holds from the next connection on.
func (c *CRM) rereadAccessKey(ctx context.Context) {
	if c.cfg.AccessKeyFile == "" {
		return
	}
	key, err := ReadAccessKeyFile(c.cfg.AccessKeyFile)
	switch {
	case err != nil:
		c.log.LogAttrs(ctx, slog.LevelError, "the access key was refused and its file cannot be read again", slog.Any("error", err))
	case key != c.cfg.AccessKey:
		c.cfg.AccessKey = key
		c.log.LogAttrs(ctx, slog.LevelInfo, "the access key was refused; using the new key found in its file",
			slog.String("file", c.cfg.AccessKeyFile))
	default:
		c.log.LogAttrs(ctx, slog.LevelError, "the access key was refused; write the cloudlet's current key into its file (edgectl rotates it) and the CRM uses it at its next attempt",
			slog.String("file", c.cfg.AccessKeyFile))
	}
}
