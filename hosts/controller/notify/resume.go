package notify

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	notifyv1 "github.com/edgekit/edgekit/proto/edgekit/notify/v1"
	"go.etcd.io/etcd/api/v3/mvccpb"
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

// maxReadOps bounds the reads of one etcd transaction (etcd refuses more
// than its --max-txn-ops, 128 by default).
const maxReadOps = 100

// readScoped reads at revision rev what a CRM of the session's cloudlet
// may need: the settings, every object of the kinds that go to every
// session or by organization, the session's own cloudlet, and of the
// placed kinds only the objects of placedKeys (queue keys). It returns
// them in the order of the kinds' table, the settings first, each kind's
// objects by key. A revision the store compacted or does not have yet is
// errNoResume.
func (s *session) readScoped(ctx context.Context, rev int64, placedKeys []string) ([]regionObject, error) {
	k := s.srv.kinds
	cli := s.srv.cfg.Store.Client()
	wrap := func(err error) error {
		if errors.Is(err, rpctypes.ErrCompacted) || errors.Is(err, rpctypes.ErrFutureRev) {
			return fmt.Errorf("%w %d: %w", errNoResume, rev, err)
		}
		return err
	}
	byKind := map[string][]string{}
	for _, qk := range placedKeys {
		kind, key := splitQKey(qk)
		byKind[kind] = append(byKind[kind], key)
	}
	// One read of each whole kind and of the settings, then the single
	// objects in transactions of at most maxReadOps reads.
	ops := []clientv3.Op{clientv3.OpGet(k.settingsPath, clientv3.WithRev(rev))}
	type one struct {
		d   *kindDef
		key string
	}
	var singles []one
	for _, d := range k.order {
		switch {
		case d.route.placed:
			keys := byKind[d.name]
			slices.Sort(keys)
			for _, key := range keys {
				singles = append(singles, one{d, key})
			}
		case d.name == k.cloudlets.Name():
			singles = append(singles, one{d, s.ck})
		default:
			ops = append(ops, clientv3.OpGet(k.prefix+d.name+"/", clientv3.WithPrefix(), clientv3.WithRev(rev)))
		}
	}
	wholeOps := len(ops)
	for _, o := range singles {
		ops = append(ops, clientv3.OpGet(k.prefix+o.d.name+"/"+o.key, clientv3.WithRev(rev)))
	}
	var resps []*clientv3.GetResponse
	for start := 0; start < len(ops); start += maxReadOps {
		tr, err := cli.Txn(ctx).Then(ops[start:min(start+maxReadOps, len(ops))]...).Commit()
		if err != nil {
			return nil, wrap(err)
		}
		for _, r := range tr.Responses {
			resps = append(resps, (*clientv3.GetResponse)(r.GetResponseRange()))
		}
	}
	var val []byte
	var modRev int64
	if kvs := resps[0].Kvs; len(kvs) > 0 {
		val, modRev = kvs[0].Value, kvs[0].ModRevision
	}
	settings, err := decodeSettings(val)
	if err != nil {
		return nil, err
	}
	out := []regionObject{{key: "", obj: settings, modRev: modRev}}
	whole, single := resps[1:wholeOps], resps[wholeOps:]
	wi, si := 0, 0
	add := func(d *kindDef, kvs []*mvccpb.KeyValue) error {
		for _, kv := range kvs {
			_, key, ok := k.split(string(kv.Key))
			if !ok {
				continue
			}
			obj, err := d.decode(key, kv.Value)
			if err != nil {
				return err
			}
			out = append(out, regionObject{d: d, key: key, obj: obj, modRev: kv.ModRevision})
		}
		return nil
	}
	for _, d := range k.order {
		if d.route.placed || d.name == k.cloudlets.Name() {
			for si < len(singles) && singles[si].d == d {
				if err := add(d, single[si].Kvs); err != nil {
					return nil, err
				}
				si++
			}
			continue
		}
		if err := add(d, whole[wi].Kvs); err != nil {
			return nil, err
		}
		wi++
	}
	return out, nil
}

// mergeByKind returns a and b in the order of the kinds' table (the
// settings first), keeping the order of each within a kind.
func mergeByKind(k *kinds, a, b []regionObject) []regionObject {
	rank := func(o regionObject) int {
		if o.d == nil {
			return -1
		}
		return slices.Index(k.order, o.d)
	}
	out := slices.Concat(a, b)
	slices.SortStableFunc(out, func(x, y regionObject) int { return rank(x) - rank(y) })
	return out
}

// hasCloudlet says whether objs holds the cloudlet of key string ck.
func hasCloudlet(objs []regionObject, k *kinds, ck string) bool {
	for _, o := range objs {
		if o.d != nil && o.d.name == k.cloudlets.Name() && o.key == ck {
			return true
		}
	}
	return false
}

// resume queues, between a SyncStart and a SyncEnd marked resumed, what
// changed for the CRM since revision from: the objects of its scope that
// changed after from or entered it since, and deletes of those it held at
// from that are gone or left it. It returns the revision it read and how
// many objects it queued; errNoResume when from cannot be read.
//
// Of the placed kinds it reads only the objects on the cloudlet now and
// those that changed since from elsewhere or are gone (they may have been
// on it at from), as the hub knows them. Deletes since from are found by
// counting the keys at from: when every key then still exists (the count
// equals the hub's count of objects created at or before from), nothing
// was deleted; otherwise the keys at from are listed (keys only). The
// count is skipped when the hub knows that nothing was deleted since from
// (an earlier count from an older revision, and no delete dispatched
// since), so that a storm of CRMs resuming from revisions close to one
// another counts a few times, not once each.
func (s *session) resume(from int64) (int64, int, error) {
	k := s.srv.kinds
	cli := s.srv.cfg.Store.Client()
	var placedPrefixes []string
	for _, d := range k.order {
		if d.route.placed {
			placedPrefixes = append(placedPrefixes, k.prefix+d.name+"/")
		}
	}
	noResume := func(err error) error {
		if errors.Is(err, rpctypes.ErrCompacted) || errors.Is(err, rpctypes.ErrFutureRev) {
			return fmt.Errorf("%w %d: %w", errNoResume, from, err)
		}
		return err
	}
	if err := s.catchUp(); err != nil {
		return 0, 0, err
	}
	v := s.hub.resumeView(s.ck, from, nil)
	if from > v.rev {
		return 0, 0, fmt.Errorf("%w %d: the controller has read the region only up to %d", errNoResume, from, v.rev)
	}
	if from < v.clean {
		var atFrom int64
		for _, p := range placedPrefixes {
			resp, err := cli.Get(s.ctx, p, clientv3.WithPrefix(), clientv3.WithCountOnly(), clientv3.WithRev(from))
			if err != nil {
				return 0, 0, noResume(err)
			}
			atFrom += resp.Count
		}
		if atFrom == v.kept {
			s.hub.markClean(from, v.rev)
		} else {
			var keys []string
			for _, p := range placedPrefixes {
				resp, err := cli.Get(s.ctx, p, clientv3.WithPrefix(), clientv3.WithKeysOnly(), clientv3.WithRev(from))
				if err != nil {
					return 0, 0, noResume(err)
				}
				for _, kv := range resp.Kvs {
					if kind, key, ok := k.split(string(kv.Key)); ok {
						keys = append(keys, qkey(kind, key))
					}
				}
			}
			v = s.hub.resumeView(s.ck, from, keys)
		}
	}
	rev := v.rev
	cur, err := s.readScoped(s.ctx, rev, v.on)
	if err != nil {
		return 0, 0, err
	}
	if !hasCloudlet(cur, k, s.ck) {
		return 0, 0, errCloudletGone(s.ck)
	}
	// The cloudlet's placed objects unchanged since from are the same at
	// from: they are decoded once, and only the others read at from.
	var same []regionObject
	heldKeys := slices.Concat(v.changed, v.gone)
	for _, o := range cur {
		switch {
		case o.d == nil || !o.d.route.placed:
		case o.modRev <= from:
			same = append(same, o)
		default:
			heldKeys = append(heldKeys, qkey(o.d.name, o.key))
		}
	}
	old, err := s.readScoped(s.ctx, from, heldKeys)
	if err != nil {
		return 0, 0, err
	}
	held := newScope(s.cloudlet)
	for _, o := range mergeByKind(k, old, same) {
		feed(held, o, from)
	}
	mod := map[string]int64{}
	var all []change
	for _, o := range cur {
		all = append(all, feed(s.scope, o, rev)...)
		mod[qkey(kindName(o.d), o.key)] = o.modRev
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
