package controller

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/internal/store"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
)

// Refreshing the instances of an App: rolling an App change out.
//
// An App's definition (image, configs, ports...) is read by the resource
// manager whenever it acts on an instance, so an instance picks up a
// change of its App at its next update. A refresh requests that update of
// every instance of the App the caller may change, in batches: it moves
// each instance of a batch to UPDATE_REQUESTED (a new request, as an
// update does, without changing a field), then follows each one's
// progress until it reaches READY or UPDATE_ERROR, and starts the next
// batch only when every instance of the batch is READY. The first batch
// with a failure ends the refresh: the instances of later batches are left
// untouched. Instances that are not READY or UPDATE_ERROR when the
// refresh lists them (being created, deleted, failed creates) are skipped
// and reported as such. The resource manager of each instance (a CRM or a
// CCRM replica) does the work like any update: the refresh is controller
// logic over the ordinary update request, nothing host-specific.

// DefaultRefreshBatchSize is the batch size of a refresh that sets none.
const DefaultRefreshBatchSize = 1

// requestRefresh moves the object of key to UPDATE_REQUESTED as a new
// request without changing a field, when it is READY or UPDATE_ERROR, and
// returns the revision of the request (to follow it from).
func (tk *tracked[T, I]) requestRefresh(ctx context.Context, c *Controller, key string) (int64, error) {
	rev, err := c.store.Txn(ctx, func(tx *store.Tx) error {
		cur, found, err := tk.store.TxGet(tx, key)
		if err != nil {
			return err
		}
		if !found {
			return status.Errorf(codes.NotFound, "%s %s does not exist", tk.name, key)
		}
		if st := tk.state(cur); st != edgeproto.TrackedState_TRACKED_STATE_READY && st != edgeproto.TrackedState_TRACKED_STATE_UPDATE_ERROR {
			return preconditionf("%s %s is %s: only a READY or UPDATE_ERROR instance is refreshed", tk.name, key, stateName(st))
		}
		next := cur.Clone()
		tk.setErrors(next, nil)
		tk.setRequest(next, requestID(tx))
		tk.setState(next, edgeproto.TrackedState_TRACKED_STATE_UPDATE_REQUESTED)
		stamp(next, "updated_at")
		if err := tk.resetInfo(tx, key); err != nil {
			return err
		}
		return tk.store.TxPut(tx, next)
	})
	if err != nil {
		return 0, apiError(err)
	}
	c.countRequest(tk.name, opUpdate)
	return rev, nil
}

// refreshAppInsts runs the refresh req asks for, sending each step to
// send (which is called from one goroutine at a time).
func (c *Controller) refreshAppInsts(ctx context.Context, req *edgeproto.RefreshAppInstsRequest, send func(*edgeproto.RefreshAppInstsResponse) error) error {
	probe := &edgeproto.App{Key: req.GetKey()}
	if req.GetKey() == nil {
		return invalidf("App: key is missing")
	}
	if err := checkKey(probe); err != nil {
		return invalidf("App: %v", err)
	}
	if err := authorize(ctx, c.apps, probe, false); err != nil {
		return err
	}
	appKey := probe.GetKeyString()
	if _, _, err := c.apps.store.Get(ctx, appKey); errors.Is(err, store.ErrNotFound) {
		return status.Errorf(codes.NotFound, "App %s does not exist", appKey)
	} else if err != nil {
		return apiError(err)
	}
	p, err := principal(ctx)
	if err != nil {
		return err
	}
	all, err := c.appInsts.list(ctx, c)
	if err != nil {
		return apiError(err)
	}
	var insts []*edgeproto.AppInst
	for _, ai := range all {
		if proto.Equal(ai.GetAppKey(), req.GetKey()) && p.owns(appInstOwner(ai)) {
			insts = append(insts, ai)
		}
	}
	slices.SortFunc(insts, func(a, b *edgeproto.AppInst) int { return strings.Compare(a.GetKeyString(), b.GetKeyString()) })

	var mu sync.Mutex
	sendFor := func(ai *edgeproto.AppInst, p *edgeproto.Progress) error {
		mu.Lock()
		defer mu.Unlock()
		p = proto.Clone(p).(*edgeproto.Progress)
		p.Final = false
		return send(&edgeproto.RefreshAppInstsResponse{Progress: p, AppInstKey: ai.GetKey()})
	}
	var todo []*edgeproto.AppInst
	skipped := 0
	for _, ai := range insts {
		switch ai.GetState() {
		case edgeproto.TrackedState_TRACKED_STATE_READY, edgeproto.TrackedState_TRACKED_STATE_UPDATE_ERROR:
			todo = append(todo, ai)
		default:
			skipped++
			if err := sendFor(ai, &edgeproto.Progress{State: ai.GetState(),
				Message: fmt.Sprintf("Skipped: it is %s, not READY", stateName(ai.GetState()))}); err != nil {
				return err
			}
		}
	}
	batch := int(req.GetBatchSize())
	if batch <= 0 {
		batch = DefaultRefreshBatchSize
	}
	done := 0
	for start := 0; start < len(todo); start += batch {
		part := todo[start:min(start+batch, len(todo))]
		n := start/batch + 1
		errs := make([]error, len(part))
		var wg sync.WaitGroup
		for i, ai := range part {
			wg.Go(func() {
				key := ai.GetKeyString()
				rev, err := c.appInsts.requestRefresh(ctx, c, key)
				if err != nil {
					errs[i] = err
					_ = sendFor(ai, &edgeproto.Progress{State: ai.GetState(), Message: "Refresh refused", Errors: []string{status.Convert(err).Message()}})
					return
				}
				if err := sendFor(ai, &edgeproto.Progress{State: edgeproto.TrackedState_TRACKED_STATE_UPDATE_REQUESTED,
					Message: fmt.Sprintf("Refresh requested (batch %d)", n)}); err != nil {
					errs[i] = err
					return
				}
				errs[i] = c.appInsts.follow(ctx, c, key, rev, opUpdate, func(p *edgeproto.Progress) error { return sendFor(ai, p) })
			})
		}
		wg.Wait()
		var failed []string
		for i, err := range errs {
			if err != nil {
				failed = append(failed, fmt.Sprintf("AppInst %s: %s", part[i].GetKeyString(), status.Convert(err).Message()))
			}
		}
		if len(failed) > 0 {
			if err := ctx.Err(); err != nil {
				return status.FromContextError(err).Err()
			}
			var left []string
			for _, ai := range todo[start+len(part):] {
				left = append(left, ai.GetKeyString())
			}
			msg := fmt.Sprintf("refresh of App %s stopped at batch %d: %s", appKey, n, strings.Join(failed, "; "))
			if len(left) > 0 {
				msg += fmt.Sprintf("; not refreshed: %s", strings.Join(left, ", "))
			}
			return status.Error(codes.Aborted, msg)
		}
		done += len(part)
	}
	msg := fmt.Sprintf("Refreshed %d instances of App %s", done, appKey)
	if skipped > 0 {
		msg += fmt.Sprintf(" (%d skipped)", skipped)
	}
	mu.Lock()
	defer mu.Unlock()
	return send(&edgeproto.RefreshAppInstsResponse{Progress: &edgeproto.Progress{
		State: edgeproto.TrackedState_TRACKED_STATE_READY, Message: msg, Final: true}})
}

func (s *appService) RefreshAppInsts(req *edgeproto.RefreshAppInstsRequest, stream grpc.ServerStreamingServer[edgeproto.RefreshAppInstsResponse]) error {
	return s.c.refreshAppInsts(stream.Context(), req, stream.Send)
}
