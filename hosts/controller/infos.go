package controller

import (
	"context"
	"errors"

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/internal/store"
	"google.golang.org/grpc/status"
)

// visibleInfo reports whether the caller p may see an Info of tk.
func (tk *tracked[T, I]) visibleInfo(p Principal, info I) bool { return p.owns(tk.infoOwner(info)) }

// showInfos sends, redacted, the Infos of tk the caller may see that match
// filter.
func showInfos[T store.Object[T], I store.Object[I]](ctx context.Context, c *Controller, tk *tracked[T, I], filter I, send func(I) error) error {
	p, err := principal(ctx)
	if err != nil {
		return err
	}
	return walkFresh(ctx, c, tk.info, tk.infoCache, func(info I) error {
		if tk.visibleInfo(p, info) && matches(filter, info) {
			return send(redacted(info))
		}
		return nil
	})
}

// watchInfos sends the Infos of tk the caller may see that match filter,
// then SYNCED, then every change, until ctx ends. When the store cannot
// resume the watch (the revision was compacted, a member lost its leader),
// it lists again and sends every object as a PUT before going on: a
// receiver applying events by key converges.
func watchInfos[T store.Object[T], I store.Object[I]](ctx context.Context, tk *tracked[T, I], filter I, send func(edgeproto.EventType, I) error) error {
	p, err := principal(ctx)
	if err != nil {
		return err
	}
	visible := func(info I) bool { return tk.visibleInfo(p, info) && matches(filter, info) }
	synced := false
	for {
		infos, rev, err := tk.info.List(ctx)
		if err != nil {
			return apiError(err)
		}
		for _, info := range infos {
			if visible(info) {
				if err := send(edgeproto.EventType_EVENT_TYPE_PUT, redacted(info)); err != nil {
					return err
				}
			}
		}
		if !synced {
			var zero I
			if err := send(edgeproto.EventType_EVENT_TYPE_SYNCED, zero); err != nil {
				return err
			}
			synced = true
		}
		for ev := range tk.info.Watch(ctx, rev+1) {
			switch ev.Type {
			case store.EventPut:
				if visible(ev.Object) {
					err = send(edgeproto.EventType_EVENT_TYPE_PUT, redacted(ev.Object))
				}
			case store.EventDelete:
				probe := tk.info.New()
				if any(ev.Object) != nil && ev.Object.ProtoReflect().IsValid() {
					probe = ev.Object
				}
				if tk.visibleInfo(p, probe) || p.Admin {
					err = send(edgeproto.EventType_EVENT_TYPE_DELETE, keyOnly(tk, probe))
				}
			case store.EventError:
				if errors.Is(ev.Err, store.ErrBadValue) {
					continue // one undecodable value: the store logged it; go on
				}
			}
			if err != nil {
				return err
			}
		}
		if ctx.Err() != nil {
			return status.FromContextError(ctx.Err()).Err()
		}
	}
}

// keyOnly returns a new Info holding only the key of info.
func keyOnly[T store.Object[T], I store.Object[I]](tk *tracked[T, I], info I) I {
	out := tk.info.New()
	fm := info.FieldSchema().NewFieldMap()
	fm.Set(keyFlag)
	out.CopyInFields(info, fm)
	return out
}
