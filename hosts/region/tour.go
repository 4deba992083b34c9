package region

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/internal/demoapp"
)

// Developer is the organization that owns what the tour creates.
const Developer = "developer"

// tourApp is the application the tour deploys.
var tourApp = &edgeproto.AppKey{Organization: Developer, Name: "tour-web", Version: "1"}

// tourStepTimeout bounds each step of the tour (a FLUIDOS purchase waits
// for the provider's provisioning, bounded by the solver's own 2-minute
// allocation timeout).
const tourStepTimeout = 3 * time.Minute

// bounded runs the tour step title within limit; an overrun fails naming
// the step.
func bounded(ctx context.Context, limit time.Duration, title string, run func(context.Context) error) error {
	sctx, cancel := context.WithTimeoutCause(ctx, limit,
		fmt.Errorf("tour step %q did not finish within %v; the next tour cleans up what it left", title, limit))
	defer cancel()
	err := run(sctx)
	if err != nil && sctx.Err() != nil && ctx.Err() == nil {
		err = fmt.Errorf("%w: %w", context.Cause(sctx), err)
	}
	return err
}

// tour is one run of Tour.
type tour struct {
	info *Info
	out  *printer
	api  *api
}

// Tour runs the scripted tour against a running region, printing its
// progress as it comes: a cluster and an instance of a small web
// application (Info.Executable serve) on each kind of cloudlet (the CRM's
// and the CCRM's), a call to each instance, an update of the application
// rolled out to the instances, a Service bought from the provider node
// through a solver, and the clean-up of everything it created. What an
// interrupted tour left is cleaned up first. It returns the first failure.
func Tour(ctx context.Context, info *Info, out io.Writer) error {
	a, err := dialController(info.Controller, info.AdminTokenFile, info.CAFile)
	if err != nil {
		return err
	}
	defer a.Close()
	t := &tour{info: info, out: newPrinter(out), api: a}
	t.out.printf("the tour of region %q (%s)\n", info.Region, info.StatusPage)
	if err := bounded(ctx, tourStepTimeout, "cleaning up", func(ctx context.Context) error { return t.cleanUp(ctx, true) }); err != nil {
		return fmt.Errorf("cleaning up what an earlier tour left: %w", err)
	}
	steps := []struct {
		title string
		run   func(context.Context) error
	}{
		{"a cluster on each kind of cloudlet", t.createClusters},
		{"an application, and an instance of it on each cluster", t.deploy},
		{"an update of the application, rolled out to its instances", t.update},
		{"a Service bought from the provider node through a solver", t.buyService},
		{"clean-up", func(ctx context.Context) error { return t.cleanUp(ctx, false) }},
	}
	for i, s := range steps {
		t.out.printf("\n%d/%d %s\n", i+1, len(steps), s.title)
		if err := bounded(ctx, tourStepTimeout, s.title, s.run); err != nil {
			return err
		}
	}
	t.out.printf("\nthe tour is done (%.1fs)\n", t.out.since().Seconds())
	return nil
}

// clusterKey is the tour's cluster on cloudlet c; instKey its instance.
func clusterKey(c CloudletInfo) *edgeproto.ClusterKey {
	return &edgeproto.ClusterKey{Organization: Developer, Name: "tour-" + c.Name}
}

func instKey(c CloudletInfo) *edgeproto.AppInstKey {
	return &edgeproto.AppInstKey{Organization: Developer, Name: "tour-web-" + c.Name}
}

// label names an object on a cloudlet in the progress lines.
func label(c CloudletInfo, kind, name string) string {
	return fmt.Sprintf("%-9s %-5s %-11s %s", c.Name, c.Manager, kind, name)
}

// show prints a change's progress, one line per message.
func (t *tour) show(what string) func(*edgeproto.Progress) {
	start := time.Now()
	var lastState, lastMsg string
	return func(p *edgeproto.Progress) {
		state := strings.TrimPrefix(p.GetState().String(), "TRACKED_STATE_")
		msg := p.GetMessage()
		if msg == state {
			msg = "" // the controller's word for a state change
		}
		if state == lastState && (msg == lastMsg || msg == "") {
			return
		}
		lastState, lastMsg = state, msg
		t.out.printf("  %-45s %-16s %-50s %5.1fs\n", what, state, msg, time.Since(start).Seconds())
	}
}

// eachCloudlet runs f for every cloudlet of the region at once.
func (t *tour) eachCloudlet(f func(CloudletInfo) error) error {
	var (
		wg   sync.WaitGroup
		errs errList
	)
	for _, c := range t.info.Cloudlets {
		wg.Go(func() {
			if err := f(c); err != nil {
				errs.add(fmt.Errorf("%s: %w", c.Name, err))
			}
		})
	}
	wg.Wait()
	return errs.err()
}

func (t *tour) createClusters(ctx context.Context) error {
	return t.eachCloudlet(func(c CloudletInfo) error {
		s, err := t.api.clusters.CreateClusterInst(ctx, &edgeproto.CreateClusterInstRequest{ClusterInst: &edgeproto.ClusterInst{
			Key: clusterKey(c), CloudletKey: &edgeproto.CloudletKey{Organization: c.Organization, Name: c.Name},
			FlavorName: Flavor, Deployment: c.Platform}})
		if err != nil {
			return err
		}
		_, err = follow[*edgeproto.CreateClusterInstResponse](s, t.show(label(c, "ClusterInst", clusterKey(c).GetName())))
		return err
	})
}

func (t *tour) deploy(ctx context.Context) error {
	app := &edgeproto.App{Key: tourApp, Deployment: "local", ImageType: edgeproto.ImageType_IMAGE_TYPE_NONE,
		Command: t.info.Executable + " serve", HealthCheck: edgeproto.HealthCheck_HEALTH_CHECK_HTTP, HealthCheckPath: "/healthz",
		Ports:   []*edgeproto.Port{{Proto: edgeproto.PortProtocol_PORT_PROTOCOL_HTTP, InternalPort: 8080}},
		EnvVars: []*edgeproto.EnvVar{{Name: "GREETING", Value: "hello"}}}
	if _, err := t.api.apps.CreateApp(ctx, &edgeproto.CreateAppRequest{App: app}); err != nil {
		return fmt.Errorf("App %s: %w", tourApp.GetName(), err)
	}
	t.out.printf("  App %s: %s serve, HTTP health check on /healthz\n", app.GetKeyString(), t.info.Executable)
	return t.eachCloudlet(func(c CloudletInfo) error {
		s, err := t.api.appInsts.CreateAppInst(ctx, &edgeproto.CreateAppInstRequest{AppInst: &edgeproto.AppInst{
			Key: instKey(c), AppKey: tourApp, ClusterKey: clusterKey(c)}})
		if err != nil {
			return err
		}
		if _, err := follow[*edgeproto.CreateAppInstResponse](s, t.show(label(c, "AppInst", instKey(c).GetName()))); err != nil {
			return err
		}
		return t.call(ctx, c, "hello")
	})
}

// call calls the instance on cloudlet c and checks its greeting.
func (t *tour) call(ctx context.Context, c CloudletInfo, greeting string) error {
	ai, err := t.instance(ctx, instKey(c))
	if err != nil {
		return err
	}
	if ai == nil || len(ai.GetRuntimeInfo().GetPorts()) == 0 {
		return fmt.Errorf("app instance %s reports no port", instKey(c).GetName())
	}
	url := "http://" + ai.GetUri() + ":" + strconv.Itoa(int(ai.GetRuntimeInfo().GetPorts()[0])) + "/"
	body, err := demoapp.Get(ctx, url)
	if err != nil {
		return err
	}
	if !strings.HasPrefix(body, greeting+" from pid") {
		return fmt.Errorf("GET %s answered %q, want %q from pid ...", url, body, greeting)
	}
	t.out.printf("  %-45s GET %s -> %q (pids %v)\n", label(c, "AppInst", instKey(c).GetName()), url, body, ai.GetRuntimeInfo().GetPids())
	return nil
}

// instance returns the app instance of key, or nil.
func (t *tour) instance(ctx context.Context, key *edgeproto.AppInstKey) (*edgeproto.AppInst, error) {
	s, err := t.api.appInsts.ShowAppInsts(ctx, &edgeproto.ShowAppInstsRequest{Filter: &edgeproto.AppInst{Key: key}})
	if err != nil {
		return nil, err
	}
	return last(collect(s, (*edgeproto.ShowAppInstsResponse).GetAppInst))
}

func (t *tour) update(ctx context.Context) error {
	if _, err := t.api.apps.UpdateApp(ctx, &edgeproto.UpdateAppRequest{App: &edgeproto.App{Key: tourApp,
		EnvVars: []*edgeproto.EnvVar{{Name: "GREETING", Value: "bonjour"}}}, Fields: []string{edgeproto.AppFieldEnvVars}}); err != nil {
		return fmt.Errorf("App %s: %w", tourApp.GetName(), err)
	}
	t.out.printf("  App %s: GREETING=bonjour; each instance is restarted with it (power state REBOOT_REQUESTED)\n", tourApp.GetName())
	return t.eachCloudlet(func(c CloudletInfo) error {
		s, err := t.api.appInsts.UpdateAppInst(ctx, &edgeproto.UpdateAppInstRequest{AppInst: &edgeproto.AppInst{Key: instKey(c),
			PowerState: edgeproto.PowerState_POWER_STATE_REBOOT_REQUESTED}, Fields: []string{edgeproto.AppInstFieldPowerState}})
		if err != nil {
			return err
		}
		if _, err := follow[*edgeproto.UpdateAppInstResponse](s, t.show(label(c, "AppInst", instKey(c).GetName()))); err != nil {
			return err
		}
		return t.call(ctx, c, "bonjour")
	})
}

// cleanUp deletes what the tour creates: instances, then the application
// and the clusters. Before the tour (quiet) it removes what an
// interrupted tour left, where there is something.
func (t *tour) cleanUp(ctx context.Context, quiet bool) error {
	gone := func(err error) bool { return status.Code(err) == codes.NotFound }
	show := func(what string) func(*edgeproto.Progress) {
		if quiet {
			return nil
		}
		return t.show(what)
	}
	err := t.eachCloudlet(func(c CloudletInfo) error {
		s, err := t.api.appInsts.DeleteAppInst(ctx, &edgeproto.DeleteAppInstRequest{Key: instKey(c)})
		if err == nil {
			_, err = follow[*edgeproto.DeleteAppInstResponse](s, show(label(c, "AppInst", instKey(c).GetName())))
		}
		if err != nil && !gone(err) {
			return err
		}
		return nil
	})
	if err != nil {
		return err
	}
	if _, err := t.api.apps.DeleteApp(ctx, &edgeproto.DeleteAppRequest{Key: tourApp}); err != nil && !gone(err) {
		return fmt.Errorf("App %s: %w", tourApp.GetName(), err)
	} else if err == nil && !quiet {
		t.out.printf("  App %s deleted\n", tourApp.GetName())
	}
	if err := t.eachCloudlet(func(c CloudletInfo) error {
		s, err := t.api.clusters.DeleteClusterInst(ctx, &edgeproto.DeleteClusterInstRequest{Key: clusterKey(c)})
		if err == nil {
			_, err = follow[*edgeproto.DeleteClusterInstResponse](s, show(label(c, "ClusterInst", clusterKey(c).GetName())))
		}
		if err != nil && !gone(err) {
			return err
		}
		return nil
	}); err != nil {
		return err
	}
	return t.releaseService(ctx, quiet)
}
