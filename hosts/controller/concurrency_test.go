package controller_test

import (
	"fmt"
	"sync"
	"testing"

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/hosts/controller/controllertest"
)

// Two updates of different fields of one object, sent at the same time,
// both land: the update is applied with CopyInFields inside the store's
// compare-and-swap, never as a blind write of a stale copy.
func TestConcurrentUpdatesOfDifferentFieldsBothLand(t *testing.T) {
	t.Parallel()
	env := controllertest.Start(t, controllertest.Options{})
	ctx := testCtx(t)
	dev := clientsOf(env.Conn(env.OrgToken("developer")))
	key := &edgeproto.AppKey{Organization: "developer", Name: "a", Version: "1"}
	if _, err := dev.apps.CreateApp(ctx, &edgeproto.CreateAppRequest{App: &edgeproto.App{Key: key, Deployment: "docker"}}); err != nil {
		t.Fatal(err)
	}
	const rounds = 100
	for i := range rounds {
		image := fmt.Sprintf("image:%d", i)
		path := fmt.Sprintf("/health/%d", i)
		var wg sync.WaitGroup
		errs := make([]error, 2)
		wg.Go(func() {
			_, errs[0] = dev.apps.UpdateApp(ctx, &edgeproto.UpdateAppRequest{App: &edgeproto.App{Key: key, ImagePath: image},
				Fields: []string{edgeproto.AppFieldImagePath}})
		})
		wg.Go(func() {
			_, errs[1] = dev.apps.UpdateApp(ctx, &edgeproto.UpdateAppRequest{App: &edgeproto.App{Key: key, HealthCheckPath: path},
				Fields: []string{edgeproto.AppFieldHealthCheckPath}})
		})
		wg.Wait()
		for _, err := range errs {
			if err != nil {
				t.Fatalf("round %d: %v", i, err)
			}
		}
		got, err := recvAll(dev.apps.ShowApps(ctx, &edgeproto.ShowAppsRequest{}))
		if err != nil || len(got) != 1 {
			t.Fatalf("round %d: show %v %v", i, got, err)
		}
		app := got[0].(*edgeproto.App)
		if app.ImagePath != image || app.HealthCheckPath != path {
			t.Fatalf("round %d: lost update: image_path %q (want %q), health_check_path %q (want %q)",
				i, app.ImagePath, image, app.HealthCheckPath, path)
		}
	}
}
