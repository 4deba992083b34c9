package store_test

import (
	"errors"
	"testing"

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/internal/store"
	"github.com/edgekit/edgekit/internal/testenv/etcdtest"
)

// FuzzDecode feeds arbitrary values to the decoder of a kind: a value
// either decodes to the object of its key or gives an ErrBadValue error
// naming the key; it never panics.
func FuzzDecode(f *testing.F) {
	for _, seed := range []string{
		`{"key":{"name":"c1","organization":"acme"},"flavorName":"small"}`,
		`{"key":{"name":"c1","organization":"acme"},"state":"TRACKED_STATE_READY","nodePools":[{"name":"p","numNodes":3}]}`,
		`{"key":{"name":"c1","organization":"acme"},"createdAt":"2024-01-01T00:00:00Z","infraAnnotations":{"a":"b"}}`,
		`{"key":{"name":"c1","organization":"acme"},"unknown":[1,2,{"x":null}]}`,
		`{"key":{"name":"c1"}}`,
		`{"state": 99}`,
		`{"createdAt":"yesterday"}`,
		`[]`, `null`, ``, `{`, "\x00", `{"key":{"name":"\ud800"}}`,
	} {
		f.Add([]byte(seed))
	}
	// A store on a client that is never used: decoding needs no etcd.
	srv := etcdtest.New(f)
	s, err := store.New(srv.Client(), "fuzz")
	if err != nil {
		f.Fatal(err)
	}
	k := store.NewKind[*edgeproto.ClusterInst](s)
	const key = "name=c1,organization=acme"
	f.Fuzz(func(t *testing.T, data []byte) {
		obj, err := k.Decode(key, data)
		if err != nil {
			var se *store.Error
			if !errors.Is(err, store.ErrBadValue) || !errors.As(err, &se) || se.Key != key || se.Kind != "ClusterInst" {
				t.Fatalf("error %v does not name the key", err)
			}
			return
		}
		if obj.GetKeyString() != key {
			t.Fatalf("decoded the object of %q under %q", obj.GetKeyString(), key)
		}
	})
}
