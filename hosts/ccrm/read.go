package ccrm

import (
	"context"
	"errors"

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/internal/store"
	"go.etcd.io/etcd/api/v3/mvccpb"
	"google.golang.org/protobuf/proto"
)

// pathOf is the etcd key of the object of kind and key.
func (r *Replica) pathOf(kind, key string) string {
	switch kind {
	case r.cloudletKind.Name():
		return r.cloudletKind.Path(key)
	case r.clusterKind.Name():
		return r.clusterKind.Path(key)
	case r.tpeKind.Name():
		return r.tpeKind.Path(key)
	}
	return r.appInstKind.Path(key)
}

// read decodes the object of c and its cloudlet, as read under the claim
// (kvs: the object's value, then, but for a cloudlet, the value of the
// cloudlet c names), and returns the object in the state to submit it in;
// nil when it needs no work (any more) or is not the replica's to serve.
// An object on another cloudlet than c names (which the controller does
// not allow) has its cloudlet read from etcd.
func (r *Replica) read(ctx context.Context, c candidate, kvs []*mvccpb.KeyValue) (proto.Message, *edgeproto.Cloudlet, error) {
	if kvs[0] == nil {
		return nil, nil, nil
	}
	getCloudlet := func(k *edgeproto.CloudletKey) (*edgeproto.Cloudlet, error) {
		ks := cloudletKeyString(k)
		if ks == c.cloudlet {
			if kvs[1] == nil {
				return nil, nil
			}
			return r.cloudletKind.Decode(ks, kvs[1].Value)
		}
		cl, _, err := r.cloudletKind.Get(ctx, ks)
		if errors.Is(err, store.ErrNotFound) {
			return nil, nil
		}
		return cl, err
	}
	var (
		obj   proto.Message
		state edgeproto.TrackedState
		cl    *edgeproto.Cloudlet
		err   error
	)
	// request sets *st to the request to submit the object in, if it
	// needs work, and reads its cloudlet ck.
	request := func(o proto.Message, st *edgeproto.TrackedState, ck *edgeproto.CloudletKey) {
		if req, ok := needsWork(*st); ok {
			*st, state, obj = req, req, o
			cl, err = getCloudlet(ck)
		}
	}
	switch c.kind {
	case r.cloudletKind.Name():
		var o *edgeproto.Cloudlet
		if o, err = r.cloudletKind.Decode(c.key, kvs[0].Value); err == nil {
			if req, ok := needsWork(o.State); ok {
				o.State, state, obj, cl = req, req, o, o
			}
		}
	case r.clusterKind.Name():
		var o *edgeproto.ClusterInst
		if o, err = r.clusterKind.Decode(c.key, kvs[0].Value); err == nil {
			request(o, &o.State, o.CloudletKey)
		}
	case r.appInstKind.Name():
		var o *edgeproto.AppInst
		if o, err = r.appInstKind.Decode(c.key, kvs[0].Value); err == nil {
			request(o, &o.State, o.CloudletKey)
		}
	case r.tpeKind.Name():
		var o *edgeproto.TrustPolicyException
		if o, err = r.readTPE(c, kvs[0].Value); err == nil && o != nil {
			obj, state = o, o.Instances[0].State
			cl, err = getCloudlet(o.Instances[0].CloudletKey)
		}
	}
	switch {
	case err != nil:
		return nil, nil, err
	case obj == nil || state == 0 || !r.serves(cl):
		return nil, nil, nil
	}
	return obj, cl, nil
}
