package allocator

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/edgekit/edgekit/fluidos"
	"github.com/edgekit/edgekit/internal/store"
)

// Admit says why what cfg asks of flavor f (nil: all of it) cannot be
// provisioned on this node, or nil: the provider asks before a
// reservation holds anything, so that nothing is sold and then fails. It
// implements provider.Allocator.
//
//   - A K8Slice is always provisionable (a cluster sized to it).
//   - A Service is provisionable when it runs on this node's
//     infrastructure (hosting policy Provider, or Shared as this node
//     decides; Consumer is refused) and its blueprint renders, with the
//     buyer's configuration, into an App that runs an image of the
//     catalog, or, for a blueprint in the FLUIDOS reference's format on
//     a Kubernetes cloudlet, into Kubernetes objects.
//   - VM and Sensor flavors are refused: the platform runs processes, not
//     virtual machines, and the node has no sensor data endpoint to hand
//     over.
func (a *Allocator) Admit(ctx context.Context, f *fluidos.Flavor, cfg *fluidos.Configuration) error {
	switch {
	case f.GetK8Slice() != nil:
		return nil
	case f.GetService() != nil:
		return a.admitService(ctx, f.GetService(), cfg.GetService())
	case f.GetVm() != nil:
		return fmt.Errorf("VM flavors are not provisionable on this node: its platform (%s) runs processes, not virtual machines", a.cloudlet.GetPlatformType())
	case f.GetSensor() != nil:
		return errors.New("Sensor flavors are not provisionable on this node: it has no sensor data endpoint to hand over")
	}
	return errors.New("the flavor offers nothing this node provisions")
}

func (a *Allocator) admitService(ctx context.Context, s *fluidos.Service, sc *fluidos.ServiceConfiguration) error {
	if err := hostingPolicy(s, sc.GetHostingPolicy()); err != nil {
		return err
	}
	bp, _, err := store.NewKind[*fluidos.ServiceBlueprint](a.cfg.Store).Get(ctx, s.GetBlueprintId())
	if errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("blueprint %q of the service is gone", s.GetBlueprintId())
	}
	if err != nil {
		return err
	}
	probe := &fluidos.Allocation{Id: "a-admission", Buyer: &fluidos.NodeIdentity{NodeId: "buyer"}, Seller: a.cfg.Self}
	r, err := newRenderer(bp, sc, probe, a.catalog)
	if err != nil {
		return err
	}
	if IsManifestBlueprint(bp) {
		if err := a.CheckBlueprint(bp); err != nil {
			return err
		}
		_, err := r.manifestApp(probe)
		return err
	}
	app, err := r.app(probe)
	if err != nil {
		return err
	}
	r, err = newRenderer(credentialsBlueprint(&fluidos.Contract{Flavor: &fluidos.Flavor{Spec: &fluidos.Flavor_Service{Service: s}}}, app), sc, probe, a.catalog)
	if err != nil {
		return err
	}
	_, err = r.credentials("127.0.0.1", 1)
	return err
}

// hostingPolicy refuses a service the buyer wants hosted where this node
// does not run it: Consumer, or a service offered only that way.
func hostingPolicy(s *fluidos.Service, asked fluidos.HostingPolicy) error {
	const refusal = "hosting policy Consumer is not served: this node runs services on its own infrastructure only (Provider, or Shared as it decides)"
	switch asked {
	case fluidos.HostingPolicy_HOSTING_POLICY_CONSUMER:
		return errors.New(refusal)
	case fluidos.HostingPolicy_HOSTING_POLICY_UNSPECIFIED:
		ps := s.GetHostingPolicies()
		if len(ps) > 0 && !slices.Contains(ps, fluidos.HostingPolicy_HOSTING_POLICY_PROVIDER) && !slices.Contains(ps, fluidos.HostingPolicy_HOSTING_POLICY_SHARED) {
			return errors.New(refusal)
		}
	}
	return nil
}
