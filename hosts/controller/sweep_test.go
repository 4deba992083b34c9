package controller_test

import (
	"context"
	"log/slog"
	"slices"
	"strings"
	"testing"

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/hosts/controller/controllertest"
	"github.com/edgekit/edgekit/internal/testenv/grpcsweep"
	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
)

// TestEveryMethodAnswersBadRequestsWithAStatus calls every method of every
// service registered on the controller's server (as controller.Run
// registers them: the user API, the resource managers' API, the CRMs'
// notify stream, health and reflection) with an empty message, random
// bytes and undecodable bytes, as no one, an admin, an organization and a
// CCRM. No call may crash the controller, panic in a handler (recovered or
// not), answer Internal or Unknown, or answer a request that does not
// decode otherwise than InvalidArgument.
func TestEveryMethodAnswersBadRequestsWithAStatus(t *testing.T) {
	panics := &grpcsweep.PanicLog{}
	env := controllertest.Start(t, controllertest.Options{Notify: true, Logger: slog.New(panics)})
	var services []string
	for name := range env.Controller.Server().GetServiceInfo() {
		services = append(services, name)
	}
	slices.Sort(services)
	// What Run registers must all be swept: guards against a services
	// list that silently shrinks.
	for _, want := range []string{"edgeproto.v1.AppInstService", "edgekit.rm.v1.ReportService", "edgekit.notify.v1.NotifyService",
		"grpc.health.v1.Health", "grpc.reflection.v1.ServerReflection"} {
		if !slices.Contains(services, want) {
			t.Fatalf("service %s is not registered (registered: %v)", want, services)
		}
	}
	admin := env.Conn(env.AdminToken())
	calls := grpcsweep.Sweep(t, grpcsweep.Options{
		Services: services,
		Roles: []grpcsweep.Role{
			{Name: "no one", Conn: env.Conn("")},
			{Name: "admin", Conn: admin},
			{Name: "organization", Conn: env.Conn(env.OrgToken("dev1"))},
			{Name: "ccrm", Conn: env.Conn(env.CCRMToken())},
		},
		Panics: panics,
		Alive: func(ctx context.Context) error {
			if _, err := healthpb.NewHealthClient(admin).Check(ctx, &healthpb.HealthCheckRequest{}); err != nil {
				return err
			}
			_, err := recvAll(edgeproto.NewFlavorServiceClient(admin).ShowFlavors(ctx, &edgeproto.ShowFlavorsRequest{}))
			return err
		},
	})
	// The sweep reached the handlers, not only the authentication: the
	// creates and updates of the tracked kinds without their object (which
	// used to crash the controller) are refused as invalid, for an admin
	// and for an organization.
	for _, m := range []string{"CloudletService/CreateCloudlet", "CloudletService/UpdateCloudlet",
		"ClusterInstService/CreateClusterInst", "ClusterInstService/UpdateClusterInst",
		"AppInstService/CreateAppInst", "AppInstService/UpdateAppInst"} {
		for _, role := range []string{"admin", "organization"} {
			i := slices.IndexFunc(calls, func(c grpcsweep.Call) bool {
				return c.Method == "/edgeproto.v1."+m && c.Role == role && c.Input == "empty"
			})
			if i < 0 {
				t.Errorf("%s was not called as %s", m, role)
			} else if c := calls[i]; c.Code != codes.InvalidArgument || !strings.Contains(c.Message, "no object in the request") {
				t.Errorf("%v: want InvalidArgument \"no object in the request\"", c)
			}
		}
	}
	t.Logf("%d calls to %d services", len(calls), len(services))
}
