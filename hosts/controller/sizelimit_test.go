package controller_test

import (
	"strings"
	"testing"

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/hosts/controller"
	"github.com/edgekit/edgekit/hosts/controller/controllertest"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// TestObjectsOverTheSizeLimitAreInvalid: a create or update whose object
// is larger than controller.MaxObjectBytes (as stored) answers
// InvalidArgument naming the object and the limit, whether it would also
// be over etcd's request limit (4 MB) or only over the controller's
// (1.2 MB); an object under the limit is stored.
func TestObjectsOverTheSizeLimitAreInvalid(t *testing.T) {
	env := controllertest.Start(t, controllertest.Options{})
	dev := clientsOf(env.Conn(env.OrgToken("dev1")))
	ctx := testCtx(t)
	app := func(name string, manifestBytes int) *edgeproto.App {
		return &edgeproto.App{Key: &edgeproto.AppKey{Organization: "dev1", Name: name, Version: "1"}, Deployment: "kubernetes",
			DeploymentManifest: strings.Repeat("x", manifestBytes)}
	}
	wantTooLarge := func(err error, what, key string) {
		t.Helper()
		st, _ := status.FromError(err)
		if st.Code() != codes.InvalidArgument || !strings.Contains(st.Message(), key) ||
			!strings.Contains(st.Message(), "1048576 bytes (1 MiB) per object") {
			t.Errorf("%s: got %v, want InvalidArgument naming %s and the limit", what, err, key)
		}
	}
	_, err := dev.apps.CreateApp(ctx, &edgeproto.CreateAppRequest{App: app("huge", 4_000_000)})
	wantTooLarge(err, "create of 4 MB", "organization=dev1,name=huge")
	_, err = dev.apps.CreateApp(ctx, &edgeproto.CreateAppRequest{App: app("big", controller.MaxObjectBytes+200_000)})
	wantTooLarge(err, "create of 1.2 MB", "organization=dev1,name=big")

	if _, err := dev.apps.CreateApp(ctx, &edgeproto.CreateAppRequest{App: app("fits", controller.MaxObjectBytes-10_000)}); err != nil {
		t.Fatalf("create under the limit: %v", err)
	}
	_, err = dev.apps.UpdateApp(ctx, &edgeproto.UpdateAppRequest{App: app("fits", 3_000_000),
		Fields: []string{edgeproto.AppFieldDeploymentManifest}})
	wantTooLarge(err, "update to 3 MB", "organization=dev1,name=fits")
	got, err := recvAll(dev.apps.ShowApps(ctx, &edgeproto.ShowAppsRequest{}))
	if err != nil || len(got) != 1 || len(got[0].(*edgeproto.App).GetDeploymentManifest()) != controller.MaxObjectBytes-10_000 {
		t.Errorf("after the refused update: %d apps, %v", len(got), err)
	}
}
