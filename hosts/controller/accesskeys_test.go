package controller_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/hosts/controller"
	"github.com/edgekit/edgekit/hosts/controller/controllertest"
	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/grpc/codes"
)

func TestCloudletAccessKeys(t *testing.T) {
	t.Parallel()
	env := controllertest.Start(t, controllertest.Options{})
	ctx := testCtx(t)
	op := clientsOf(env.Conn(env.OrgToken("op")))
	key := &edgeproto.CloudletKey{Organization: "op", Name: "edge"}
	s, err := op.cloudlets.CreateCloudlet(ctx, &edgeproto.CreateCloudletRequest{NoWait: true,
		Cloudlet: &edgeproto.Cloudlet{Key: key, PlatformType: "fake", CrmOnEdge: true}})
	if err != nil {
		t.Fatal(err)
	}
	first, err := s.Recv()
	if err != nil {
		t.Fatal(err)
	}
	accessKey := first.CrmAccessKey
	if len(accessKey) < 32 {
		t.Fatalf("first response carries access key %q", accessKey)
	}
	c := env.Controller
	if err := c.VerifyAccessKey(ctx, key, accessKey); err != nil {
		t.Fatalf("the issued key: %v", err)
	}
	for _, bad := range []string{"", "x", accessKey + "x"} {
		if err := c.VerifyAccessKey(ctx, key, bad); !errors.Is(err, controller.ErrBadAccessKey) {
			t.Errorf("key %q: got %v, want ErrBadAccessKey", bad, err)
		}
	}
	if err := c.VerifyAccessKey(ctx, &edgeproto.CloudletKey{Organization: "op", Name: "other"}, accessKey); !errors.Is(err, controller.ErrBadAccessKey) {
		t.Errorf("another cloudlet accepted the key: %v", err)
	}
	// Only a hash is stored.
	resp, err := env.Store.Client().Get(ctx, env.Store.Prefix(), clientv3.WithPrefix())
	if err != nil {
		t.Fatal(err)
	}
	for _, kv := range resp.Kvs {
		if strings.Contains(string(kv.Value), accessKey) {
			t.Fatalf("the access key is stored in clear under %s", kv.Key)
		}
	}
	// Rotation: the old key stops working, the new one works; only the owner rotates.
	other := clientsOf(env.Conn(env.OrgToken("intruder")))
	_, err = other.cloudlets.RotateCloudletAccessKey(ctx, &edgeproto.RotateCloudletAccessKeyRequest{Key: key})
	wantCode(t, err, codes.PermissionDenied, "rotation by another organization")
	rot, err := op.cloudlets.RotateCloudletAccessKey(ctx, &edgeproto.RotateCloudletAccessKeyRequest{Key: key})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.VerifyAccessKey(ctx, key, accessKey); !errors.Is(err, controller.ErrBadAccessKey) {
		t.Errorf("the old key still works after rotation: %v", err)
	}
	if err := c.VerifyAccessKey(ctx, key, rot.CrmAccessKey); err != nil {
		t.Errorf("the rotated key: %v", err)
	}
	// A cloudlet without crm_on_edge has no key.
	if _, err := drain(op.cloudlets.CreateCloudlet(ctx, &edgeproto.CreateCloudletRequest{NoWait: true,
		Cloudlet: &edgeproto.Cloudlet{Key: &edgeproto.CloudletKey{Organization: "op", Name: "dc"}, PlatformType: "fake"}})); err != nil {
		t.Fatal(err)
	}
	_, err = op.cloudlets.RotateCloudletAccessKey(ctx, &edgeproto.RotateCloudletAccessKeyRequest{Key: &edgeproto.CloudletKey{Organization: "op", Name: "dc"}})
	wantCode(t, err, codes.FailedPrecondition, "rotation of a cloudlet without crm_on_edge")
}
