package region

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/internal/demoapp"
	"github.com/edgekit/edgekit/platforms/kubernetes"
)

// Developer is the organization that owns what the tour creates.
const Developer = "developer"

// tourApp is the application the tour deploys.
var tourApp = &edgeproto.AppKey{Organization: Developer, Name: "tour-web", Version: "1"}

// tourImageApp is the image application the tour deploys on a Kubernetes
// cloudlet (KubernetesCloudlet): a container image, no command.
var tourImageApp = &edgeproto.AppKey{Organization: Developer, Name: "tour-image", Version: "1"}

// tourImage is the image of tourImageApp.
const tourImage = "docker.io/library/nginx:1.27"

// onKubernetes reports whether cloudlet c is on the kubernetes platform.
func onKubernetes(c CloudletInfo) bool { return c.Platform == kubernetes.PlatformType }

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

// tourStep is a step of the tour: its title, printed, and what it does.
type tourStep struct {
	title string
	run   func(context.Context) error
}

// tour is one run of Tour.
type tour struct {
	info *Info
	out  *printer
	api  *api
	// namespaces are those of what the tour bought from
	// KubernetesProvider, checked gone after the release.
	namespaces []string
}

// Tour runs the scripted tour against a running region, printing its
// progress as it comes: a cluster and an instance of a small web
// application (Info.Executable serve) on each kind of cloudlet (the CRM's
// and the CCRM's), a call to each instance, an update of the application
// rolled out to the instances (on a Kubernetes cloudlet: an instance of
// an image App, tour-image, READY when its pods are, neither called nor
// updated), a Service bought from the provider node
// through a solver, and the clean-up of everything it created. In a
// region with a Kubernetes cluster it also buys, from the node on that
// cluster (KubernetesProvider), a Service of KubernetesBlueprint (a
// database in the FLUIDOS reference's format) and a K8Slice, waits until
// they are ACTIVE, prints their credentials' endpoints and whether their
// secrets came (never the secrets), releases them and checks that their
// namespaces left the cluster. What an interrupted tour left is cleaned
// up first. It returns the first failure.
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
	steps := []tourStep{
		{"a cluster on each kind of cloudlet", t.createClusters},
		{"an application, and an instance of it on each cluster", t.deploy},
		{"an update of the application, rolled out to its instances", t.update},
		{"a Service bought from the provider node through a solver", t.buyService},
	}
	if t.onKubernetesNode() {
		steps = append(steps,
			tourStep{"a database Service and a K8Slice bought from the node on the Kubernetes cluster", t.buyOnKubernetes},
			tourStep{"their release: the namespaces leave the cluster", t.releaseOnKubernetes})
	}
	steps = append(steps, tourStep{"clean-up", func(ctx context.Context) error { return t.cleanUp(ctx, false) }})
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
		if state == lastState && (msg == lastMsg || msg == "") {
			return
		}
		lastState, lastMsg = state, msg
		t.out.printf("  %-45s %-16s %-50s %5.1fs\n", what, state, msg, time.Since(start).Seconds())
	}
}

// eachCloudlet runs f for every cloudlet of the region at once.
func (t *tour) eachCloudlet(f func(CloudletInfo) error) error {
	return t.someCloudlets(func(CloudletInfo) bool { return true }, f)
}

// someCloudlets runs f for every cloudlet of the region that which
// selects, at once.
func (t *tour) someCloudlets(which func(CloudletInfo) bool, f func(CloudletInfo) error) error {
	var (
		wg   sync.WaitGroup
		errs errList
	)
	for _, c := range t.info.Cloudlets {
		if !which(c) {
			continue
		}
		wg.Go(func() {
			if err := f(c); err != nil {
				errs.add(fmt.Errorf("%s: %w", c.Name, err))
			}
		})
	}
	wg.Wait()
	return errs.err()
}

// tourCluster is the tour's cluster on cloudlet c: on the local platform
// of the region's flavor; on Kubernetes a namespace whose quota is one
// node pool of 1 vCPU and 1 GB (the region's flavor is not one a
// Kubernetes cloudlet offers: its flavors are its nodes' shapes).
func tourCluster(c CloudletInfo) *edgeproto.ClusterInst {
	ci := &edgeproto.ClusterInst{Key: clusterKey(c), CloudletKey: &edgeproto.CloudletKey{Organization: c.Organization, Name: c.Name},
		FlavorName: Flavor, Deployment: c.Platform}
	if onKubernetes(c) {
		ci.FlavorName = ""
		ci.NodePools = []*edgeproto.NodePool{{Name: "pool", NumNodes: 1, NodeResources: &edgeproto.NodeResources{Vcpus: 1, RamMb: 1024}}}
	}
	return ci
}

func (t *tour) createClusters(ctx context.Context) error {
	return t.eachCloudlet(func(c CloudletInfo) error {
		s, err := t.api.clusters.CreateClusterInst(ctx, &edgeproto.CreateClusterInstRequest{ClusterInst: tourCluster(c)})
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
	if slices.ContainsFunc(t.info.Cloudlets, onKubernetes) {
		img := &edgeproto.App{Key: tourImageApp, Deployment: kubernetes.PlatformType, ImageType: edgeproto.ImageType_IMAGE_TYPE_DOCKER,
			ImagePath: tourImage, HealthCheck: edgeproto.HealthCheck_HEALTH_CHECK_HTTP, HealthCheckPath: "/",
			Ports: []*edgeproto.Port{{Proto: edgeproto.PortProtocol_PORT_PROTOCOL_HTTP, InternalPort: 80}}}
		if _, err := t.api.apps.CreateApp(ctx, &edgeproto.CreateAppRequest{App: img}); err != nil {
			return fmt.Errorf("App %s: %w", tourImageApp.GetName(), err)
		}
		t.out.printf("  App %s: image %s, HTTP health check on /, for the Kubernetes cloudlet\n", img.GetKeyString(), tourImage)
	}
	return t.eachCloudlet(func(c CloudletInfo) error {
		app := tourApp
		if onKubernetes(c) {
			app = tourImageApp
		}
		s, err := t.api.appInsts.CreateAppInst(ctx, &edgeproto.CreateAppInstRequest{AppInst: &edgeproto.AppInst{
			Key: instKey(c), AppKey: app, ClusterKey: clusterKey(c)}})
		if err != nil {
			return err
		}
		if _, err := follow[*edgeproto.CreateAppInstResponse](s, t.show(label(c, "AppInst", instKey(c).GetName()))); err != nil {
			return err
		}
		if onKubernetes(c) {
			return t.pods(ctx, c)
		}
		return t.call(ctx, c, "hello")
	})
}

// pods prints what the instance on Kubernetes cloudlet c runs: its
// cluster's Service and pods are inside the cluster, out of the tour's
// reach.
func (t *tour) pods(ctx context.Context, c CloudletInfo) error {
	ai, err := t.instance(ctx, instKey(c))
	if err != nil {
		return err
	}
	if ai == nil {
		return fmt.Errorf("app instance %s is gone", instKey(c).GetName())
	}
	t.out.printf("  %-45s runs in the cluster: %v\n", label(c, "AppInst", instKey(c).GetName()), ai.GetRuntimeInfo().GetContainerIds())
	return nil
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
	notKubernetes := func(c CloudletInfo) bool { return !onKubernetes(c) }
	return t.someCloudlets(notKubernetes, func(c CloudletInfo) error {
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
	for _, app := range []*edgeproto.AppKey{tourApp, tourImageApp} {
		if _, err := t.api.apps.DeleteApp(ctx, &edgeproto.DeleteAppRequest{Key: app}); err != nil && !gone(err) {
			return fmt.Errorf("App %s: %w", app.GetName(), err)
		} else if err == nil && !quiet {
			t.out.printf("  App %s deleted\n", app.GetName())
		}
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
