package controller

import (
	"errors"
	"strings"

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
	if len(b) > MaxObjectBytes {
		return invalidf("%s %s is too large: %d bytes as stored, over the limit of %d bytes (1 MiB) per object",
			kind, key, len(b), MaxObjectBytes)
	}
	return nil
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
