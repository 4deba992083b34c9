package controller_test

import (
	"context"
	"strings"
	"testing"

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/hosts/controller/controllertest"
	"github.com/edgekit/edgekit/internal/store"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
)

// FuzzUpdateApp sends updates with random values (wire bytes of an App)
// and random flags through the API. Whatever it sends, the controller
// answers (never crashes), refuses what is invalid with InvalidArgument or
// FailedPrecondition, and stores only valid objects: the key is unchanged,
// every enum is defined, and a refused update changes nothing.
func FuzzUpdateApp(f *testing.F) {
	env := controllertest.Start(f, controllertest.Options{})
	ctx, cancel := context.WithCancel(context.Background())
	f.Cleanup(cancel)
	dev := clientsOf(env.Conn(env.OrgToken("dev")))
	key := &edgeproto.AppKey{Organization: "dev", Name: "app", Version: "1"}
	if _, err := dev.apps.CreateApp(ctx, &edgeproto.CreateAppRequest{App: &edgeproto.App{Key: key, Deployment: "docker"}}); err != nil {
		f.Fatal(err)
	}
	apps := store.NewKind[*edgeproto.App](env.Store)
	seed := func(a *edgeproto.App, flags string) {
		b, err := proto.Marshal(a)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b, flags)
	}
	seed(&edgeproto.App{ImagePath: "nginx"}, "3")
	seed(&edgeproto.App{ImageType: 99}, "2")
	seed(&edgeproto.App{Args: []string{"a", "b"}}, "8:add")
	seed(&edgeproto.App{Args: []string{"a"}}, "8:remove,3")
	seed(&edgeproto.App{Key: &edgeproto.AppKey{Name: "other"}}, "1.2")
	seed(&edgeproto.App{Annotations: map[string]string{"k": "v"}}, "17")
	seed(&edgeproto.App{}, "18")
	seed(&edgeproto.App{}, "99,3")
	seed(&edgeproto.App{EnvVars: []*edgeproto.EnvVar{{Name: "x", Secret: true, SecretValue: "y"}}}, "10.4")
	f.Fuzz(func(t *testing.T, wire []byte, flags string) {
		src := &edgeproto.App{}
		if err := proto.Unmarshal(wire, src); err != nil {
			return
		}
		src.Key = key // address the one object; the flags may still name the key
		before, _, err := apps.Get(ctx, "organization=dev,name=app,version=1")
		if err != nil {
			t.Fatal(err)
		}
		_, err = dev.apps.UpdateApp(ctx, &edgeproto.UpdateAppRequest{App: src, Fields: strings.Split(flags, ",")})
		after, _, gerr := apps.Get(ctx, before.GetKeyString())
		if gerr != nil {
			t.Fatalf("the object is gone or unreadable after an update: %v", gerr)
		}
		if err != nil {
			switch status.Code(err) {
			case codes.InvalidArgument, codes.FailedPrecondition, codes.Internal:
				// Internal: the gRPC codec refused the request (invalid UTF-8).
			default:
				t.Fatalf("update answered %v", err)
			}
			if !proto.Equal(before, after) {
				t.Fatalf("a refused update changed the object:\nbefore %v\nafter  %v", before, after)
			}
			return
		}
		if !proto.Equal(after.Key, key) {
			t.Fatalf("an update changed the key to %v", after.Key)
		}
		if err := after.ValidateEnums(); err != nil {
			t.Fatalf("an update stored an undefined enum: %v", err)
		}
	})
}
