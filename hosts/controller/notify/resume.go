package notify

import (
	"context"
	"errors"
	"fmt"
	"strings"

	notifyv1 "github.com/edgekit/edgekit/proto/edgekit/notify/v1"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"
)

// errNoResume says that a resumed sync is impossible (the store compacted
// the CRM's revision, or never had it): the CRM gets a full sync.
var errNoResume = errors.New("notify: cannot resume from that revision")

// regionObject is one object of a read of the region.
type regionObject struct {
	d      *kindDef // nil for the settings
	key    string
	obj    proto.Message
	modRev int64
}

// readRegion reads every object a CRM may need at revision rev (0: the
// newest) and returns them with that revision, in the order of the kinds'
// table, the settings first. A revision the store compacted or does not
// have yet is errNoResume.
func (s *session) readRegion(ctx context.Context, rev int64) ([]regionObject, int64, error) {
	k := s.srv.kinds
	cli := s.srv.cfg.Store.Client()
	get := func(key string, opts ...clientv3.OpOption) (*clientv3.GetResponse, error) {
		if rev != 0 {
			opts = append(opts, clientv3.WithRev(rev))
		}
		resp, err := cli.Get(ctx, key, opts...)
		if errors.Is(err, rpctypes.ErrCompacted) || errors.Is(err, rpctypes.ErrFutureRev) {
			return nil, fmt.Errorf("%w %d: %w", errNoResume, rev, err)
		}
		if err != nil {
			return nil, err
		}
		if rev == 0 {
			rev = resp.Header.Revision
		}
		return resp, nil
	}
	resp, err := get(k.settingsPath)
	if err != nil {
		return nil, 0, err
	}
	var val []byte
	var modRev int64
	if len(resp.Kvs) > 0 {
		val, modRev = resp.Kvs[0].Value, resp.Kvs[0].ModRevision
	}
	settings, err := decodeSettings(val)
	if err != nil {
		return nil, 0, err
	}
	out := []regionObject{{key: "", obj: settings, modRev: modRev}}
	for _, d := range k.order {
		resp, err := get(k.prefix+d.name+"/", clientv3.WithPrefix())
		if err != nil {
			return nil, 0, err
		}
		for _, kv := range resp.Kvs {
			_, key, ok := k.split(string(kv.Key))
			if !ok {
				continue
			}
			obj, err := d.decode(key, kv.Value)
			if err != nil {
				return nil, 0, err
			}
			out = append(out, regionObject{d: d, key: key, obj: obj, modRev: kv.ModRevision})
		}
	}
	return out, rev, nil
}

// resume queues, between a SyncStart and a SyncEnd marked resumed, what
// changed for the CRM since revision from: the objects of its scope that
// changed after from or entered it since, and deletes of those it held at
// from that are gone or left it. It returns the revision it read and how
// many objects it queued; errNoResume when from cannot be read.
func (s *session) resume(from int64) (int64, int, error) {
	old, _, err := s.readRegion(s.ctx, from)
	if err != nil {
		return 0, 0, err
	}
	held := newScope(s.cloudlet)
	for _, o := range old {
		feed(held, o, from)
	}
	cur, rev, err := s.readRegion(s.ctx, 0)
	if err != nil {
		return 0, 0, err
	}
	mod := map[string]int64{}
	var all []change
	found := false
	for _, o := range cur {
		if o.d != nil && o.d.name == s.srv.kinds.cloudlets.Name() && o.key == s.ck {
			found = true
		}
		all = append(all, feed(s.scope, o, rev)...)
		mod[qkey(kindName(o.d), o.key)] = o.modRev
	}
	if !found {
		return 0, 0, errCloudletGone(s.ck)
	}
	var changes []change
	for _, c := range all {
		if !held.sent[c.key] || mod[c.key] > from {
			changes = append(changes, c)
		}
	}
	for k := range held.sent {
		if s.scope.sent[k] {
			continue
		}
		kind, key := splitQKey(k)
		if d := s.srv.kinds.byName[kind]; d != nil {
			// Delete what the CRM holds and no longer needs: the scope
			// forgets it again.
			s.scope.sent[k] = true
			changes = s.scope.delChange(changes, kind, key, func() (proto.Message, error) { return d.stub(key) }, rev)
		}
	}
	if err := s.q.Put("", &notifyv1.ConnectResponse{Msg: &notifyv1.ConnectResponse_SyncStart{SyncStart: &notifyv1.SyncStart{
		Revision: rev, KeepaliveInterval: durationpb.New(s.srv.cfg.KeepaliveInterval), Resumed: true}}}, true); err != nil {
		return 0, 0, errQueueFull
	}
	if !s.put(true, changes...) {
		return 0, 0, errQueueFull
	}
	if err := s.q.Put("", &notifyv1.ConnectResponse{Msg: &notifyv1.ConnectResponse_SyncEnd{
		SyncEnd: &notifyv1.SyncEnd{Revision: rev, Objects: uint32(len(changes)), Resumed: true}}}, true); err != nil {
		return 0, 0, errQueueFull
	}
	return rev, len(changes), nil
}

// feed passes one object of a read of the region through sc, as the
// initial sync does, and returns what sc would send.
func feed(sc *scope, o regionObject, rev int64) []change {
	if o.d == nil {
		return []change{sc.putChange(settingsName, "", o.obj, rev)}
	}
	return sc.put(o.d, o.key, o.obj, rev)
}

func kindName(d *kindDef) string {
	if d == nil {
		return settingsName
	}
	return d.name
}

// splitQKey is the inverse of qkey.
func splitQKey(k string) (kind, key string) {
	kind, key, _ = strings.Cut(k, "/")
	return kind, key
}

// errCloudletGone ends a stream whose cloudlet does not exist.
func errCloudletGone(ck string) error {
	return status.Errorf(codes.NotFound, "cloudlet %s does not exist", ck)
}
