package controller

import (
	"errors"
	"strings"

	"github.com/edgekit/edgekit/internal/store"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
)

// MaxObjectBytes is the largest object the controller stores: the size of
// the object as stored (protojson, as `etcdctl get` shows it), after the
// change. It stays under etcd's request limit (1.5 MiB by default) with
// room for the rest of the change's transaction. A create or update of a
// larger object answers InvalidArgument naming the object and the limit.
const MaxObjectBytes = 1 << 20

// checkSize refuses an object larger than MaxObjectBytes as stored.
func checkSize(kind, key string, obj proto.Message) error {
	b, err := protojson.MarshalOptions{}.Marshal(obj)
	if err != nil {
		return nil // the store reports what does not encode
	}
	return sizeError(kind, key, len(b))
}

// sizeError refuses an object of size bytes as stored when that is over
// MaxObjectBytes.
func sizeError(kind, key string, size int) error {
	if size > MaxObjectBytes {
		return invalidf("%s %s is too large: %d bytes as stored, over the limit of %d bytes (1 MiB) per object",
			kind, key, size, MaxObjectBytes)
	}
	return nil
}

// putWithinLimit buffers the write of obj in tx, or refuses it like
// checkSize, measuring the encoding the store writes rather than encoding
// obj once more.
func putWithinLimit[T store.Object[T]](tx *store.Tx, k *kind[T], key string, obj T) error {
	size, err := k.store.TxPutSized(tx, obj)
	if err != nil {
		return err
	}
	return sizeError(k.name, key, size)
}

// tooLarge turns the store's refusal of a change over etcd's request size
// limit (etcd's own, or its client's send limit) into InvalidArgument
// naming the object; other errors are returned as they are. It covers an
// etcd configured with a smaller limit than MaxObjectBytes allows for.
func tooLarge(kind, key string, err error) error {
	if err == nil {
		return nil
	}
	st, _ := status.FromError(err)
	if errors.Is(err, rpctypes.ErrRequestTooLarge) ||
		(st.Code() == codes.ResourceExhausted && strings.Contains(st.Message(), "larger than max")) {
		return invalidf("%s %s: the change is larger than the region's store accepts in one request (%v); objects are limited to %d bytes as stored",
			kind, key, err, MaxObjectBytes)
	}
	return err
}
