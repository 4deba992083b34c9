package controller

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/fieldmap"
	"github.com/edgekit/edgekit/internal/store"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
)

// tracked is a kind whose changes a resource manager carries out: the
// controller writes a *_REQUESTED state, the responsible host reports
// progress in the object's Info twin (kind I), and the controller mirrors
// the reported state onto the object.
type tracked[T store.Object[T], I store.Object[I]] struct {
	*kind[T]
	rules     rules[T]
	info      *store.Kind[I]
	infoCache *store.Cache[I]

	state       func(T) edgeproto.TrackedState
	setState    func(T, edgeproto.TrackedState)
	setErrors   func(T, []string)
	override    func(T) edgeproto.CRMOverride
	setOverride func(T, edgeproto.CRMOverride)
	// cloudletOf is the cloudlet whose resource manager acts on obj.
	cloudletOf func(T) *edgeproto.CloudletKey
	// request and setRequest read and set the object's request_id: the
	// identity of the latest request, which the reports answering it
	// carry back (see requestID).
	request    func(T) int64
	setRequest func(T, int64)
	// infoRequest is the request_id of an Info report, requestFlag its
	// flag.
	infoRequest func(I) int64
	requestFlag string

	// infoOwner is the organization that owns an Info (the object's owner).
	infoOwner func(I) string
	// stateFlag is the flag of the Info's state field.
	stateFlag string
	// infoState maps the state of an Info report onto the object's
	// TrackedState; UNSPECIFIED when the report's state is not mirrored
	// (a cloudlet reporting OFFLINE, for example).
	infoState func(obj T, info I) edgeproto.TrackedState
	status    func(I) *edgeproto.StatusInfo
	errors    func(I) []string
	// reset clears the progress and errors of an Info at a new request.
	reset func(I)
	// mirror copies into obj the Info fields the object shows (resources,
	// runtime...) that fm names; it reports whether obj changed.
	mirror func(obj T, info I, fm *fieldmap.FieldMap) bool
	// deleted, when set, runs in the transaction that removes an object,
	// to remove what belongs to it.
	deleted func(tx *store.Tx, obj T)
	// infoApplied, when set, runs in the transaction that applies an Info
	// report (that does not remove the object), with the object as it will
	// be stored, the Info after the report and the report's flags, to keep
	// what the controller derives from the Info in step with it.
	infoApplied func(tx *store.Tx, obj T, info I, fm *fieldmap.FieldMap) error
}

// removeAll deletes obj, its Info, its refs and what belongs to it in tx.
func (tk *tracked[T, I]) removeAll(c *Controller, tx *store.Tx, obj T) {
	key := obj.GetKeyString()
	tk.unlinkRefs(c, tx, obj)
	tk.store.TxDelete(tx, key)
	tk.info.TxDelete(tx, key)
	if tk.deleted != nil {
		tk.deleted(tx, obj)
	}
}

// requestID is the identity of the request that tx writes: the store
// revision tx read at. Every request transaction reads the object first,
// and commits only if it read the object's latest version, so the
// revision read is at or past the commit of the object's previous request
// (its previous incarnation's too, for a create after a delete): ids only
// grow for a key. A resource manager's reports carry the id of the
// request they answer (the Info's request_id), and ApplyInfo refuses one
// whose id is below the object's.
func requestID(tx *store.Tx) int64 { return tx.Rev() }

// op is a change the user asks for.
type op int

const (
	opCreate op = iota
	opUpdate
	opDelete
)

func (o op) String() string { return [...]string{"create", "update", "delete"}[o] }

// errFollowOnly says that a delete found the object already being deleted:
// nothing is written and the caller follows the delete in progress.
var errFollowOnly = errors.New("already being deleted")

// resetInfo clears the progress of the Info of key inside tx, so that the
// progress streamed for a new request starts empty.
func (tk *tracked[T, I]) resetInfo(tx *store.Tx, key string) error {
	info, found, err := txGet(tx, tk.info, tk.infoCache, key)
	if err != nil || !found {
		return err
	}
	tk.reset(info)
	return tk.info.TxPut(tx, info)
}

// create stores obj in CREATE_REQUESTED (READY when the request ignores the
// resource manager) and streams the progress of the create to send.
// prepare, when not nil, runs in the creating transaction.
func (tk *tracked[T, I]) create(ctx context.Context, c *Controller, obj T, noWait bool, send func(*edgeproto.Progress) error, prepare func(tx *store.Tx, obj T) error) error {
	if !obj.ProtoReflect().IsValid() { // the request's object field unset
		return invalidf("%s: no object in the request", tk.name)
	}
	override := tk.override(obj)
	obj = obj.Clone()
	tk.setOverride(obj, edgeproto.CRMOverride_CRM_OVERRIDE_UNSPECIFIED)
	ignore := edgeproto.IgnoresCRM(override)
	stored, rev, err := createObject(ctx, c, tk.kind, tk.rules, obj, func(tx *store.Tx, obj T) error {
		tk.setRequest(obj, requestID(tx))
		if ignore {
			tk.setState(obj, edgeproto.TrackedState_TRACKED_STATE_READY)
		} else {
			tk.setState(obj, edgeproto.TrackedState_TRACKED_STATE_CREATE_REQUESTED)
		}
		tk.info.TxDelete(tx, obj.GetKeyString()) // what a former object of this key reported
		if prepare != nil {
			return prepare(tx, obj)
		}
		return nil
	})
	if err != nil {
		return err
	}
	c.countRequest(tk.name, opCreate)
	msg := "Create requested"
	if ignore {
		msg = "Created without the resource manager (crm_override)"
	}
	if err := send(&edgeproto.Progress{State: tk.state(stored), Message: msg, Final: noWait || ignore}); err != nil || noWait || ignore {
		return err
	}
	return tk.follow(ctx, c, stored.GetKeyString(), rev, opCreate, send)
}

// update applies the flagged fields of src, moves the object to
// UPDATE_REQUESTED and streams the progress of the update.
func (tk *tracked[T, I]) update(ctx context.Context, c *Controller, src T, flags []string, noWait bool, send func(*edgeproto.Progress) error, prepare func(tx *store.Tx, cur, next T) error) error {
	if !src.ProtoReflect().IsValid() { // the request's object field unset
		return invalidf("%s: no object in the request", tk.name)
	}
	override := tk.override(src)
	src = src.Clone()
	tk.setOverride(src, edgeproto.CRMOverride_CRM_OVERRIDE_UNSPECIFIED)
	ignore := edgeproto.IgnoresCRM(override)
	stored, rev, changed, err := updateObject(ctx, c, tk.kind, tk.rules, src, flags, func(tx *store.Tx, cur, next T) error {
		st := tk.state(cur)
		switch {
		case edgeproto.IsTransientState(st) && !edgeproto.IgnoresTransientState(override):
			return preconditionf("%s %s is %s: wait until it settles, or set crm_override to ignore the transient state",
				tk.name, cur.GetKeyString(), stateName(st))
		case st != edgeproto.TrackedState_TRACKED_STATE_READY && st != edgeproto.TrackedState_TRACKED_STATE_UPDATE_ERROR &&
			!edgeproto.IsTransientState(st):
			return preconditionf("%s %s is %s: only a READY object can be updated (delete it and create it again)",
				tk.name, cur.GetKeyString(), stateName(st))
		}
		tk.setErrors(next, nil)
		tk.setRequest(next, requestID(tx))
		if ignore {
			tk.setState(next, edgeproto.TrackedState_TRACKED_STATE_READY)
		} else {
			tk.setState(next, edgeproto.TrackedState_TRACKED_STATE_UPDATE_REQUESTED)
			if err := tk.resetInfo(tx, cur.GetKeyString()); err != nil {
				return err
			}
		}
		if prepare != nil {
			return prepare(tx, cur, next)
		}
		return nil
	})
	if err != nil {
		return err
	}
	if !changed {
		return send(&edgeproto.Progress{State: tk.state(stored), Message: "Nothing to change", Final: true})
	}
	c.countRequest(tk.name, opUpdate)
	msg := "Update requested"
	if ignore {
		msg = "Updated without the resource manager (crm_override)"
	}
	if err := send(&edgeproto.Progress{State: tk.state(stored), Message: msg, Final: noWait || ignore}); err != nil || noWait || ignore {
		return err
	}
	return tk.follow(ctx, c, stored.GetKeyString(), rev, opUpdate, send)
}

// remove moves the object of keyMsg to DELETE_REQUESTED (or deletes it
// when the request ignores the resource manager) and streams the progress
// of the delete. A delete of an object already being deleted follows that
// delete.
func (tk *tracked[T, I]) remove(ctx context.Context, c *Controller, keyMsg proto.Message, override edgeproto.CRMOverride, noWait bool, send func(*edgeproto.Progress) error) error {
	ignore := edgeproto.IgnoresCRM(override)
	follow := false
	cur, rev, err := deleteObject(ctx, c, tk.kind, tk.rules, keyMsg, func(tx *store.Tx, cur T) error {
		follow = false // a run again (its first read a stale copy) decides afresh
		key := cur.GetKeyString()
		st := tk.state(cur)
		switch {
		case (st == edgeproto.TrackedState_TRACKED_STATE_DELETE_REQUESTED || st == edgeproto.TrackedState_TRACKED_STATE_DELETING) && !ignore:
			follow = true
			return nil
		case edgeproto.IsTransientState(st) && !edgeproto.IgnoresTransientState(override):
			return preconditionf("%s %s is %s: wait until it settles, or set crm_override to ignore the transient state",
				tk.name, key, stateName(st))
		}
		if ignore {
			tk.removeAll(c, tx, cur)
			return nil
		}
		next := cur.Clone()
		tk.setState(next, edgeproto.TrackedState_TRACKED_STATE_DELETE_REQUESTED)
		tk.setErrors(next, nil)
		tk.setRequest(next, requestID(tx))
		stamp(next, "updated_at")
		if err := tk.resetInfo(tx, key); err != nil {
			return err
		}
		return tk.store.TxPut(tx, next)
	})
	if err != nil {
		return err
	}
	key := cur.GetKeyString()
	switch {
	case ignore:
		return send(&edgeproto.Progress{State: edgeproto.TrackedState_TRACKED_STATE_DELETE_DONE,
			Message: "Deleted without the resource manager (crm_override)", Final: true})
	case follow:
		if err := send(&edgeproto.Progress{State: tk.state(cur), Message: "Delete already in progress", Final: noWait}); err != nil || noWait {
			return err
		}
	default:
		c.countRequest(tk.name, opDelete)
		if err := send(&edgeproto.Progress{State: edgeproto.TrackedState_TRACKED_STATE_DELETE_REQUESTED,
			Message: "Delete requested", Final: noWait}); err != nil || noWait {
			return err
		}
	}
	return tk.follow(ctx, c, key, rev, opDelete, send)
}

// follow streams the progress of change o of the object of key, from the
// store revision rev on, until the object reaches a final state of o, an
// error state, or ctx ends. It reads the object and its Info as of rev,
// then as of every later revision that changed either, in order, so that
// each progress message is sent once, with the state the object had when
// the message was reported, never with a later one. A state change that
// brings no message is sent without a message (the state is the news). An
// error state ends with an ABORTED status naming the errors.
func (tk *tracked[T, I]) follow(ctx context.Context, c *Controller, key string, rev int64, o op, send func(*edgeproto.Progress) error) error {
	w := c.watchKeys(ctx, rev, tk.store.Path(key), tk.info.Path(key))
	defer w.stop()
	var (
		seen      int64 // the newest revision shown
		sentMsgs  int
		lastState = edgeproto.TrackedState_TRACKED_STATE_UNSPECIFIED
	)
	// show sends what changed as of one revision; it reports whether the
	// change reached its end.
	show := func(obj T, found bool, info I, infoFound bool) (bool, error) {
		gone := !found
		var (
			st  *edgeproto.StatusInfo
			ers []string
		)
		if infoFound {
			st, ers = tk.status(info), tk.errors(info)
		}
		state := edgeproto.TrackedState_TRACKED_STATE_DELETE_DONE
		if !gone {
			state = tk.state(obj)
			ers = nil
			if edgeproto.IsErrorState(state) {
				ers = objErrors(obj)
			}
		}
		// Progress messages of this change, in order.
		msgs := st.GetMsgs()
		if len(msgs) < sentMsgs {
			sentMsgs = 0 // the resource manager restarted the change
		}
		fresh := msgs[sentMsgs:]
		for _, m := range fresh {
			if err := send(&edgeproto.Progress{State: state, Message: m, Status: st}); err != nil {
				return false, err
			}
		}
		sentMsgs = len(msgs)
		final, failed := finalState(o, state, gone)
		if final {
			msg := finalMessage(tk.name, o, state)
			if ps := powerState(obj); !gone && ps != "" {
				msg += ", power " + ps
			}
			p := &edgeproto.Progress{State: state, Message: msg, Errors: ers, Status: st, Final: true}
			if err := send(p); err != nil {
				return false, err
			}
			if failed {
				return false, status.Errorf(codes.Aborted, "%s %s %s failed: %s", o, tk.name, key, strings.Join(ers, "; "))
			}
			return true, nil
		}
		if state != lastState && lastState != edgeproto.TrackedState_TRACKED_STATE_UNSPECIFIED && len(fresh) == 0 {
			if err := send(&edgeproto.Progress{State: state, Status: st}); err != nil {
				return false, err
			}
		}
		lastState = state
		return false, nil
	}
	at := []int64{rev} // revisions to show; 0 is the newest
	for {
		for _, r := range at {
			if r != 0 && r <= seen {
				continue
			}
			obj, found, info, infoFound, readRev, err := tk.readAt(ctx, key, r)
			if errors.Is(err, rpctypes.ErrCompacted) {
				// That revision is gone: show the newest instead.
				obj, found, info, infoFound, readRev, err = tk.readAt(ctx, key, 0)
			}
			if err != nil {
				if ctx.Err() != nil {
					break // reported below
				}
				return apiError(err)
			}
			if readRev <= seen {
				continue
			}
			seen = readRev
			done, err := show(obj, found, info, infoFound)
			if done || err != nil {
				return err
			}
		}
		if err := w.next(ctx); err != nil {
			if ctx.Err() != nil {
				return status.Errorf(codes.DeadlineExceeded, "%s of %s %s still in state %s when the call ended; it goes on: follow it with Show",
					o, tk.name, key, stateName(lastState))
			}
			return apiError(err)
		}
		revs, lost := w.revisions()
		at = revs
		if lost {
			at = append(at, 0) // changes may be missing: the newest too
		}
	}
}

// readAt reads the object of key and its Info as of store revision rev
// (0: the newest) and returns the revision read.
func (tk *tracked[T, I]) readAt(ctx context.Context, key string, rev int64) (obj T, found bool, info I, infoFound bool, readRev int64, err error) {
	cli := tk.store.Store().Client()
	var opts []clientv3.OpOption
	if rev != 0 {
		opts = append(opts, clientv3.WithRev(rev))
	}
	resp, err := cli.Get(ctx, tk.store.Path(key), opts...)
	if err != nil {
		return obj, false, info, false, 0, err
	}
	readRev = rev
	if rev == 0 {
		readRev = resp.Header.Revision
	}
	if len(resp.Kvs) > 0 {
		if obj, err = tk.store.Decode(key, resp.Kvs[0].Value); err != nil {
			return obj, false, info, false, 0, err
		}
		found = true
	}
	resp, err = cli.Get(ctx, tk.info.Path(key), clientv3.WithRev(readRev))
	if err != nil {
		return obj, false, info, false, 0, err
	}
	if len(resp.Kvs) > 0 {
		if info, err = tk.info.Decode(key, resp.Kvs[0].Value); err != nil {
			return obj, false, info, false, 0, err
		}
		infoFound = true
	}
	return obj, found, info, infoFound, readRev, nil
}

// finalState says whether state ends change o, and whether in failure.
func finalState(o op, state edgeproto.TrackedState, gone bool) (final, failed bool) {
	switch {
	case gone:
		return true, o != opDelete
	case edgeproto.IsErrorState(state):
		return true, true
	case state == edgeproto.TrackedState_TRACKED_STATE_READY:
		return o != opDelete, false
	}
	return false, false
}

func finalMessage(kind string, o op, state edgeproto.TrackedState) string {
	switch {
	case state == edgeproto.TrackedState_TRACKED_STATE_DELETE_DONE && o == opDelete:
		return fmt.Sprintf("%s deleted", kind)
	case state == edgeproto.TrackedState_TRACKED_STATE_DELETE_DONE:
		return fmt.Sprintf("%s was deleted", kind)
	case edgeproto.IsErrorState(state):
		return fmt.Sprintf("%s failed: %s", o, stateName(state))
	}
	return fmt.Sprintf("%s %s", kind, stateName(state))
}

// powerState is the power state of an object that has one (an AppInst),
// without its prefix (POWER_OFF); "" when it has none or it is unset.
func powerState(obj proto.Message) string {
	m := obj.ProtoReflect()
	if !m.IsValid() {
		return ""
	}
	fd := m.Descriptor().Fields().ByName("power_state")
	if fd == nil || fd.Enum() == nil || fd.Enum().FullName() != edgeproto.PowerState(0).Descriptor().FullName() || !m.Has(fd) {
		return ""
	}
	return strings.TrimPrefix(edgeproto.PowerState(m.Get(fd).Enum()).String(), "POWER_STATE_")
}

// objErrors reads the errors field of an object.
func objErrors(obj proto.Message) []string {
	m := obj.ProtoReflect()
	fd := m.Descriptor().Fields().ByName("errors")
	if fd == nil || !fd.IsList() {
		return nil
	}
	l := m.Get(fd).List()
	out := make([]string, l.Len())
	for i := range out {
		out[i] = l.Get(i).String()
	}
	return out
}

// stateName is a TrackedState without its prefix.
func stateName(s edgeproto.TrackedState) string {
	return strings.TrimPrefix(s.String(), "TRACKED_STATE_")
}
