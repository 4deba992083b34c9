package store

import (
	"context"
	"fmt"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// EventType says what an Event reports.
type EventType uint8

// Event types.
const (
	EventPut    EventType = iota + 1 // an object was created or changed
	EventDelete                      // an object was deleted
	EventError                       // Err says what went wrong
)

func (t EventType) String() string {
	switch t {
	case EventPut:
		return "put"
	case EventDelete:
		return "delete"
	case EventError:
		return "error"
	}
	return fmt.Sprintf("EventType(%d)", uint8(t))
}

// Event is a change of one object of a kind.
type Event[T any] struct {
	Type EventType
	// Key is the object's key string; for an error about one value, that
	// value's key; otherwise "".
	Key string
	// Object is the object as written for EventPut; for EventDelete the
	// object as it was before the delete, when known (else the zero T).
	Object T
	// Rev is the revision of the change; for a compaction error the
	// compaction revision.
	Rev int64
	// Err is set for EventError: an *Error matching ErrCompacted when the
	// revision to watch from was compacted, ErrBadValue for a value that
	// does not decode, or etcd's error that ended the watch.
	Err error
}

// Watch streams the changes of the kind's objects from revision fromRev
// (0: from now on), in revision order, until ctx ends; then the channel is
// closed.
//
// A value that does not decode is reported as an EventError naming its
// key, and the watch goes on. When fromRev was compacted, or etcd ends the
// watch (its member lost its leader), one EventError is sent and the
// channel closed: the caller lists again or watches again from the
// revision after the last one it saw. A Cache does that.
func (k *Kind[T]) Watch(ctx context.Context, fromRev int64) <-chan Event[T] {
	out := make(chan Event[T])
	opts := []clientv3.OpOption{clientv3.WithPrefix(), clientv3.WithPrevKV()}
	if fromRev > 0 {
		opts = append(opts, clientv3.WithRev(fromRev))
	}
	wctx, cancel := context.WithCancel(clientv3.WithRequireLeader(ctx))
	wch := k.s.client.Watch(wctx, k.prefix, opts...)
	go func() {
		defer close(out)
		defer cancel()
		send := func(ev Event[T]) bool {
			select {
			case out <- ev:
				return true
			case <-ctx.Done():
				return false
			}
		}
		for resp := range wch {
			if err := resp.Err(); err != nil {
				if ctx.Err() == nil {
					send(Event[T]{Type: EventError, Rev: resp.CompactRevision, Err: k.watchErr(resp)})
				}
				return
			}
			for _, ev := range resp.Events {
				if !send(k.event(ev, true)) {
					return
				}
			}
		}
		if ctx.Err() == nil {
			send(Event[T]{Type: EventError, Err: fmt.Errorf("store: watch %s: the watch ended", k.name)})
		}
	}()
	return out
}

// watchErr turns the error of a failed watch response into the store's.
func (k *Kind[T]) watchErr(resp clientv3.WatchResponse) error {
	if resp.CompactRevision != 0 {
		return &Error{Op: "watch", Kind: k.name, Err: ErrCompacted, Rev: resp.CompactRevision, Cause: resp.Err()}
	}
	return fmt.Errorf("store: watch %s: %w", k.name, resp.Err())
}

// event converts an etcd event; a value that does not decode gives an
// EventError. With prev, a delete carries the previous object when etcd
// sent it.
func (k *Kind[T]) event(ev *clientv3.Event, prev bool) Event[T] {
	key := string(ev.Kv.Key[len(k.prefix):])
	out := Event[T]{Key: key, Rev: ev.Kv.ModRevision}
	if ev.Type == clientv3.EventTypeDelete {
		out.Type = EventDelete
		if prev && ev.PrevKv != nil {
			obj, err := k.decode("watch", key, ev.PrevKv.Value)
			if err == nil {
				out.Object = obj
			}
		}
		return out
	}
	obj, err := k.decode("watch", key, ev.Kv.Value)
	if err != nil {
		out.Type, out.Err = EventError, err
		return out
	}
	out.Type, out.Object = EventPut, obj
	return out
}
