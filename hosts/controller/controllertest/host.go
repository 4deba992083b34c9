package controllertest

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/executor"
	"github.com/edgekit/edgekit/fieldmap"
	"github.com/edgekit/edgekit/internal/store"
	rmv1 "github.com/edgekit/edgekit/proto/edgekit/rm/v1"
	"google.golang.org/protobuf/proto"
)

// Host plays the resource manager of every cloudlet in tests: it mirrors
// the store's objects, submits every object a user moved to a *_REQUESTED
// state to an engine on the given platform, and sends the engine's reports
// to the controller's ReportService, as an off-site resource manager does.
type Host struct {
	st      *store.Store
	reports rmv1.ReportServiceClient
	engine  *executor.Engine
	log     *slog.Logger

	cloudlets *executor.Cache[*edgeproto.Cloudlet]
	clusters  *executor.Cache[*edgeproto.ClusterInst]
	apps      *executor.Cache[*edgeproto.App]
	appInsts  *executor.Cache[*edgeproto.AppInst]

	mu       sync.Mutex
	rejected []string // reports the controller judged and did not apply
}

// NewHost returns a host that reads objects from st and reports to
// reports; platform does the work.
func NewHost(st *store.Store, reports rmv1.ReportServiceClient, platform executor.Platform, log *slog.Logger) (*Host, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	h := &Host{
		st: st, reports: reports, log: log,
		cloudlets: executor.NewCache[*edgeproto.Cloudlet](),
		clusters:  executor.NewCache[*edgeproto.ClusterInst](),
		apps:      executor.NewCache[*edgeproto.App](),
		appInsts:  executor.NewCache[*edgeproto.AppInst](),
	}
	eng, err := executor.New(executor.Config{
		Platform: platform,
		Objects: executor.Objects{
			Cloudlets:    storeGetter[*edgeproto.CloudletKey](st, func(k *edgeproto.CloudletKey) *edgeproto.Cloudlet { return &edgeproto.Cloudlet{Key: k} }),
			ClusterInsts: storeGetter[*edgeproto.ClusterKey](st, func(k *edgeproto.ClusterKey) *edgeproto.ClusterInst { return &edgeproto.ClusterInst{Key: k} }),
			Apps:         storeGetter[*edgeproto.AppKey](st, func(k *edgeproto.AppKey) *edgeproto.App { return &edgeproto.App{Key: k} }),
			AppInsts:     storeGetter[*edgeproto.AppInstKey](st, func(k *edgeproto.AppInstKey) *edgeproto.AppInst { return &edgeproto.AppInst{Key: k} }),
		},
		CloudletInfos: reportSender[*edgeproto.CloudletInfo](h, func(i *edgeproto.CloudletInfo) *rmv1.ReportInfoRequest {
			return &rmv1.ReportInfoRequest{Info: &rmv1.ReportInfoRequest_CloudletInfo{CloudletInfo: i}}
		}),
		ClusterInstInfos: reportSender[*edgeproto.ClusterInstInfo](h, func(i *edgeproto.ClusterInstInfo) *rmv1.ReportInfoRequest {
			return &rmv1.ReportInfoRequest{Info: &rmv1.ReportInfoRequest_ClusterInstInfo{ClusterInstInfo: i}}
		}),
		AppInstInfos: reportSender[*edgeproto.AppInstInfo](h, func(i *edgeproto.AppInstInfo) *rmv1.ReportInfoRequest {
			return &rmv1.ReportInfoRequest{Info: &rmv1.ReportInfoRequest_AppInstInfo{AppInstInfo: i}}
		}),
		Logger: log,
	})
	if err != nil {
		return nil, err
	}
	h.engine = eng
	return h, nil
}

// storeGetter reads objects from the store itself rather than from the
// host's mirrors: the mirrors of different kinds follow their own watches,
// so an object submitted from one mirror may depend on an object another
// mirror has not received yet.
func storeGetter[K any, V store.Object[V]](st *store.Store, probe func(K) V) executor.Getter[K, V] {
	k := store.NewKind[V](st)
	return executor.GetterFunc[K, V](func(ctx context.Context, key K) (V, error) {
		ks := probe(key).GetKeyString()
		v, _, err := k.Get(ctx, ks)
		if errors.Is(err, store.ErrNotFound) {
			return v, executor.NotFound(k.Name(), ks)
		}
		return v, err
	})
}

// reportSender sends reports of one Info kind to the controller. A report
// the controller judged and refused is recorded (see Rejected) and returned
// as executor.ErrReportRejected: retrying it would not change the verdict.
func reportSender[T proto.Message](h *Host, wrap func(T) *rmv1.ReportInfoRequest) executor.Sender[T] {
	return executor.SenderFunc[T](func(ctx context.Context, info T, fm *fieldmap.FieldMap) error {
		req := wrap(info)
		req.Fields = EncodeFields(fm)
		resp, err := h.reports.ReportInfo(ctx, req)
		if err != nil {
			return fmt.Errorf("report %s: %w", info.ProtoReflect().Descriptor().Name(), err)
		}
		if !resp.GetApplied() {
			h.mu.Lock()
			h.rejected = append(h.rejected, resp.GetReason())
			h.mu.Unlock()
			return fmt.Errorf("%w: %s", executor.ErrReportRejected, resp.GetReason())
		}
		return nil
	})
}

// EncodeFields renders a FieldMap as the flags of a report, with their
// list actions ("9:add").
func EncodeFields(fm *fieldmap.FieldMap) []string {
	flags := fm.Fields()
	for i, f := range flags {
		if a := fm.ListAction(f); a != fieldmap.Replace {
			flags[i] = f + ":" + a.String()
		}
	}
	return flags
}

// Rejected returns the reasons of the reports the controller did not
// apply.
func (h *Host) Rejected() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.rejected...)
}

// Engine returns the host's engine.
func (h *Host) Engine() *executor.Engine { return h.engine }

// Start runs the engine and mirrors the store until ctx ends.
func (h *Host) Start(ctx context.Context) error {
	var wg sync.WaitGroup
	wg.Go(func() { _ = h.engine.Start(ctx) })
	wg.Go(func() { mirror(ctx, h, store.NewKind[*edgeproto.App](h.st), h.apps, nil) })
	wg.Go(func() { mirror(ctx, h, store.NewKind[*edgeproto.Cloudlet](h.st), h.cloudlets, h.submit) })
	wg.Go(func() { mirror(ctx, h, store.NewKind[*edgeproto.ClusterInst](h.st), h.clusters, h.submit) })
	wg.Go(func() { mirror(ctx, h, store.NewKind[*edgeproto.AppInst](h.st), h.appInsts, h.submit) })
	wg.Wait()
	return nil
}

// submit hands obj to the engine when it asks for a change.
func (h *Host) submit(obj proto.Message) {
	if _, err := h.engine.Submit(obj); err != nil {
		h.log.Debug("not submitted", slog.String("key", executor.KeyString(obj)), slog.Any("error", err))
	}
}

// mirror keeps c equal to the objects of k: it lists them, then applies the
// watch; when the watch cannot resume it lists again. Every object put is
// passed to onPut (nil: none).
func mirror[T store.Object[T]](ctx context.Context, h *Host, k *store.Kind[T], c *executor.Cache[T], onPut func(proto.Message)) {
	for ctx.Err() == nil {
		objs, rev, err := k.List(ctx)
		if err != nil {
			h.log.Warn("list", slog.String("kind", k.Name()), slog.Any("error", err))
			select {
			case <-time.After(100 * time.Millisecond):
			case <-ctx.Done():
			}
			continue
		}
		seen := map[string]bool{}
		for _, o := range objs {
			seen[o.GetKeyString()] = true
			c.Put(o)
			if onPut != nil {
				onPut(o)
			}
		}
		for _, key := range c.Keys() {
			if !seen[key] {
				c.Delete(key)
			}
		}
		for ev := range k.Watch(ctx, rev+1) {
			switch ev.Type {
			case store.EventPut:
				c.Put(ev.Object)
				if onPut != nil {
					onPut(ev.Object)
				}
			case store.EventDelete:
				c.Delete(ev.Key)
			}
		}
	}
}
