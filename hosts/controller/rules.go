package controller

import (
	"fmt"
	"strings"

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/fieldmap"
	"github.com/edgekit/edgekit/internal/store"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
)

// Checks of one object, run before a create.

func checkCloudlet(c *edgeproto.Cloudlet) error {
	if c.GetPlatformType() == "" {
		return fmt.Errorf("platform_type is empty: name the platform that drives the cloudlet (for example \"fake\" or \"local\")")
	}
	if l := c.GetLocation(); l != nil && (l.Latitude < -90 || l.Latitude > 90 || l.Longitude < -180 || l.Longitude > 180) {
		return fmt.Errorf("location %v,%v is not on Earth (latitude -90..90, longitude -180..180)", l.Latitude, l.Longitude)
	}
	return nil
}

func checkCluster(c *edgeproto.ClusterInst) error {
	if err := checkKeyMessage("cloudlet_key", c.GetCloudletKey().ProtoReflect()); err != nil || c.GetCloudletKey() == nil {
		return fmt.Errorf("cloudlet_key is missing or incomplete")
	}
	if c.GetFlavorName() == "" && len(c.GetNodePools()) == 0 {
		return fmt.Errorf("flavor_name is empty: name the Flavor of the cluster's nodes")
	}
	return nil
}

func checkAppInst(a *edgeproto.AppInst) error {
	if a.GetAppKey() == nil || a.GetAppKey().GetName() == "" || a.GetAppKey().GetOrganization() == "" {
		return fmt.Errorf("app_key is missing or incomplete")
	}
	if a.GetClusterKey() == nil || a.GetClusterKey().GetName() == "" || a.GetClusterKey().GetOrganization() == "" {
		return fmt.Errorf("cluster_key is missing or incomplete")
	}
	if a.GetAppKey().GetOrganization() != a.GetKey().GetOrganization() {
		return fmt.Errorf("app_key.organization %q differs from key.organization %q: an instance runs an App of its own organization",
			a.GetAppKey().GetOrganization(), a.GetKey().GetOrganization())
	}
	switch a.GetPowerState() {
	case edgeproto.PowerState_POWER_STATE_UNSPECIFIED:
	default:
		return fmt.Errorf("power_state %s cannot be set at create", a.GetPowerState())
	}
	return nil
}

func checkApp(a *edgeproto.App) error {
	if a.GetDeployment() == "" {
		return fmt.Errorf("deployment is empty: say how the application is deployed (\"kubernetes\", \"docker\", \"helm\", \"vm\" or \"local\")")
	}
	return nil
}

// The rules that span objects. Each runs inside the store transaction of
// the change (see rules).

func (c *Controller) cloudletRules() rules[*edgeproto.Cloudlet] {
	return rules[*edgeproto.Cloudlet]{
		create: func(tx *store.Tx, cl *edgeproto.Cloudlet) error {
			return c.checkTrustPolicyRef(tx, cl)
		},
		update: func(tx *store.Tx, cur, next *edgeproto.Cloudlet, fm *fieldmap.FieldMap) error {
			if fm.Has(edgeproto.CloudletFieldTrustPolicy) && cur.TrustPolicy != next.TrustPolicy {
				if err := c.checkTrustPolicyRef(tx, next); err != nil {
					return err
				}
				next.TrustPolicyState = edgeproto.TrackedState_TRACKED_STATE_UPDATE_REQUESTED
			}
			if fm.HasOrHasChild(edgeproto.CloudletFieldResourceQuotas) || fm.Has(edgeproto.CloudletFieldDefaultResourceAlertThreshold) {
				return c.syncAlertsOf(tx, next)
			}
			return nil
		},
		delete: func(tx *store.Tx, cl *edgeproto.Cloudlet) error {
			return c.noDependents(tx, c.cloudlets.refOf(cl), "delete its clusters and remove it from its pools first")
		},
	}
}

func (c *Controller) checkTrustPolicyRef(tx *store.Tx, cl *edgeproto.Cloudlet) error {
	if cl.GetTrustPolicy() == "" {
		return nil
	}
	key := (&edgeproto.TrustPolicy{Key: &edgeproto.TrustPolicyKey{Organization: cl.Key.GetOrganization(), Name: cl.TrustPolicy}}).GetKeyString()
	if _, found, err := c.trustPolicies.txGet(tx, key); err != nil {
		return err
	} else if !found {
		return preconditionf("TrustPolicy %s of Cloudlet %s does not exist", key, cl.GetKeyString())
	}
	return nil
}

// readyCloudlet reads the cloudlet of key in tx and checks that it is
// READY.
func (c *Controller) readyCloudlet(tx *store.Tx, key *edgeproto.CloudletKey, what string) (*edgeproto.Cloudlet, error) {
	ks := cloudletKeyString(key)
	cl, found, err := c.cloudlets.txGet(tx, ks)
	if err != nil {
		return nil, err
	}
	if !found {
		return nil, preconditionf("Cloudlet %s of %s does not exist", ks, what)
	}
	if cl.State != edgeproto.TrackedState_TRACKED_STATE_READY {
		return nil, preconditionf("Cloudlet %s of %s is %s, not READY", ks, what, stateName(cl.State))
	}
	return cl, nil
}

func (c *Controller) checkFlavor(tx *store.Tx, name, what string, cl *edgeproto.Cloudlet) error {
	if name == "" {
		return nil
	}
	key := (&edgeproto.Flavor{Key: &edgeproto.FlavorKey{Name: name}}).GetKeyString()
	if _, found, err := c.flavors.txGet(tx, key); err != nil {
		return err
	} else if !found {
		return preconditionf("Flavor %s of %s does not exist", name, what)
	}
	if cl != nil && len(cl.FlavorNames) > 0 && !contains(cl.FlavorNames, name) {
		return preconditionf("Cloudlet %s does not offer Flavor %s (it offers %v)", cl.GetKeyString(), name, cl.FlavorNames)
	}
	return nil
}

func contains(list []string, s string) bool {
	for _, e := range list {
		if e == s {
			return true
		}
	}
	return false
}

func (c *Controller) clusterRules() rules[*edgeproto.ClusterInst] {
	return rules[*edgeproto.ClusterInst]{
		create: func(tx *store.Tx, ci *edgeproto.ClusterInst) error {
			what := "ClusterInst " + ci.GetKeyString()
			cl, err := c.readyCloudlet(tx, ci.CloudletKey, what)
			if err != nil {
				return err
			}
			if err := c.checkFlavor(tx, ci.FlavorName, what, cl); err != nil {
				return err
			}
			return c.admitCluster(tx, cl, ci)
		},
		update: func(tx *store.Tx, cur, next *edgeproto.ClusterInst, fm *fieldmap.FieldMap) error {
			if fm.Has(edgeproto.ClusterInstFieldFlavorName) && cur.FlavorName != next.FlavorName {
				if next.FlavorName == "" && len(next.NodePools) == 0 {
					return invalidf("ClusterInst %s: flavor_name cannot be emptied", cur.GetKeyString())
				}
				return c.checkFlavor(tx, next.FlavorName, "ClusterInst "+cur.GetKeyString(), nil)
			}
			return nil
		},
		delete: func(tx *store.Tx, ci *edgeproto.ClusterInst) error {
			return c.noDependents(tx, c.clusters.refOf(ci), "delete its instances first")
		},
	}
}

func (c *Controller) appInstRules() rules[*edgeproto.AppInst] {
	return rules[*edgeproto.AppInst]{
		create: func(tx *store.Tx, ai *edgeproto.AppInst) error {
			what := "AppInst " + ai.GetKeyString()
			appKey := (&edgeproto.App{Key: ai.AppKey}).GetKeyString()
			app, found, err := c.apps.txGet(tx, appKey)
			if err != nil {
				return err
			}
			if !found {
				return preconditionf("App %s of %s does not exist", appKey, what)
			}
			clusterKey := (&edgeproto.ClusterInst{Key: ai.ClusterKey}).GetKeyString()
			ci, found, err := c.clusters.txGet(tx, clusterKey)
			if err != nil {
				return err
			}
			if ai.ClusterKey.GetOrganization() != ai.Key.GetOrganization() &&
				(!found || !ci.MultiTenant || ci.State != edgeproto.TrackedState_TRACKED_STATE_READY) {
				// Another organization's cluster: one answer whether it does
				// not exist, is not multi-tenant or is not READY, so that an
				// organization learns nothing of another's clusters.
				return status.Errorf(codes.PermissionDenied,
					"%s: not allowed to use ClusterInst %s (a cluster of another organization is usable only when it is multi-tenant and READY)",
					what, clusterKey)
			}
			if !found {
				return preconditionf("ClusterInst %s of %s does not exist", clusterKey, what)
			}
			if ci.State != edgeproto.TrackedState_TRACKED_STATE_READY {
				return preconditionf("ClusterInst %s of %s is %s, not READY", clusterKey, what, stateName(ci.State))
			}
			switch {
			case ai.CloudletKey == nil:
				ai.CloudletKey = ci.CloudletKey.Clone()
			case !proto.Equal(ai.CloudletKey, ci.CloudletKey):
				return preconditionf("%s: cloudlet_key %s differs from the cloudlet %s of ClusterInst %s",
					what, cloudletKeyString(ai.CloudletKey), cloudletKeyString(ci.CloudletKey), clusterKey)
			}
			cl, err := c.readyCloudlet(tx, ai.CloudletKey, what)
			if err != nil {
				return err
			}
			if ai.Flavor == "" {
				ai.Flavor = app.DefaultFlavor
			}
			if err := c.checkFlavor(tx, ai.Flavor, what, cl); err != nil {
				return err
			}
			if err := c.checkOutbound(tx, app, cl, what); err != nil {
				return err
			}
			if err := c.admitAppInst(tx, cl, app, ai); err != nil {
				return err
			}
			return c.appInstTPEs(tx, ai, tpeChange{add: ai})
		},
		delete: func(tx *store.Tx, ai *edgeproto.AppInst) error {
			// The exceptions on the instance are removed with it.
			return c.appInstTPEs(tx, ai, tpeChange{drop: ai.GetKeyString()})
		},
		update: func(tx *store.Tx, cur, next *edgeproto.AppInst, fm *fieldmap.FieldMap) error {
			if fm.Has(edgeproto.AppInstFieldPowerState) {
				switch next.PowerState {
				case edgeproto.PowerState_POWER_STATE_POWER_ON_REQUESTED, edgeproto.PowerState_POWER_STATE_POWER_OFF_REQUESTED,
					edgeproto.PowerState_POWER_STATE_REBOOT_REQUESTED:
				default:
					return invalidf("AppInst %s: power_state may only be set to POWER_ON_REQUESTED, POWER_OFF_REQUESTED or REBOOT_REQUESTED, not %s",
						cur.GetKeyString(), next.PowerState)
				}
			}
			if fm.Has(edgeproto.AppInstFieldFlavor) && cur.Flavor != next.Flavor {
				return c.checkFlavor(tx, next.Flavor, "AppInst "+cur.GetKeyString(), nil)
			}
			return nil
		},
	}
}

func (c *Controller) appRules() rules[*edgeproto.App] {
	return rules[*edgeproto.App]{
		create: func(tx *store.Tx, a *edgeproto.App) error {
			return c.checkFlavor(tx, a.DefaultFlavor, "App "+a.GetKeyString(), nil)
		},
		update: func(tx *store.Tx, cur, next *edgeproto.App, fm *fieldmap.FieldMap) error {
			if fm.Has(edgeproto.AppFieldDefaultFlavor) && cur.DefaultFlavor != next.DefaultFlavor {
				return c.checkFlavor(tx, next.DefaultFlavor, "App "+cur.GetKeyString(), nil)
			}
			return nil
		},
		delete: func(tx *store.Tx, a *edgeproto.App) error {
			return c.noDependents(tx, c.apps.refOf(a), "delete its instances first")
		},
	}
}

func (c *Controller) flavorRules() rules[*edgeproto.Flavor] {
	return rules[*edgeproto.Flavor]{
		delete: func(tx *store.Tx, f *edgeproto.Flavor) error {
			return c.noDependents(tx, c.flavors.refOf(f), "change or delete what uses it first")
		},
	}
}

func (c *Controller) trustPolicyRules() rules[*edgeproto.TrustPolicy] {
	using := func(tx *store.Tx, p *edgeproto.TrustPolicy) ([]*edgeproto.Cloudlet, error) {
		kvs, err := tx.List(c.refPrefix(c.trustPolicies.refOf(p)))
		if err != nil {
			return nil, err
		}
		var out []*edgeproto.Cloudlet
		for _, kv := range kvs {
			key := strings.TrimPrefix(string(kv.Value), c.cloudlets.name+" ")
			cl, found, err := c.cloudlets.store.TxGet(tx, key)
			if err != nil {
				return nil, err
			}
			if found {
				out = append(out, cl)
			}
		}
		return out, nil
	}
	return rules[*edgeproto.TrustPolicy]{
		update: func(tx *store.Tx, _, next *edgeproto.TrustPolicy, _ *fieldmap.FieldMap) error {
			// Every cloudlet that applies the policy applies it again.
			cls, err := using(tx, next)
			if err != nil {
				return err
			}
			for _, cl := range cls {
				if cl.State != edgeproto.TrackedState_TRACKED_STATE_READY {
					continue
				}
				cl.TrustPolicyState = edgeproto.TrackedState_TRACKED_STATE_UPDATE_REQUESTED
				if err := c.cloudlets.store.TxPut(tx, cl); err != nil {
					return err
				}
			}
			return nil
		},
		delete: func(tx *store.Tx, p *edgeproto.TrustPolicy) error {
			cls, err := using(tx, p)
			if err != nil {
				return err
			}
			if len(cls) > 0 {
				return preconditionf("TrustPolicy %s is applied to Cloudlet %s: remove it there first", p.GetKeyString(), cls[0].GetKeyString())
			}
			return nil
		},
	}
}

func (c *Controller) tpeRules() rules[*edgeproto.TrustPolicyException] {
	return rules[*edgeproto.TrustPolicyException]{
		create: func(tx *store.Tx, e *edgeproto.TrustPolicyException) error {
			what := "TrustPolicyException " + e.GetKeyString()
			appKey := (&edgeproto.App{Key: e.Key.GetAppKey()}).GetKeyString()
			if _, found, err := c.apps.store.TxGet(tx, appKey); err != nil {
				return err
			} else if !found {
				return preconditionf("App %s of %s does not exist", appKey, what)
			}
			poolKey := (&edgeproto.CloudletPool{Key: e.Key.GetCloudletPoolKey()}).GetKeyString()
			pool, found, err := c.cloudletPools.store.TxGet(tx, poolKey)
			if err != nil {
				return err
			}
			if !found || !contains(pool.DeveloperOrganizations, e.Key.GetAppKey().GetOrganization()) {
				// One answer whether the pool does not exist or is not
				// offered, so that a developer learns nothing of pools
				// not offered to it.
				return preconditionf("CloudletPool %s of %s does not exist or is not offered to organization %s",
					poolKey, what, e.Key.GetAppKey().GetOrganization())
			}
			switch e.State {
			case edgeproto.TrustPolicyExceptionState_TRUST_POLICY_EXCEPTION_STATE_UNSPECIFIED:
				e.State = edgeproto.TrustPolicyExceptionState_TRUST_POLICY_EXCEPTION_STATE_APPROVAL_REQUESTED
			case edgeproto.TrustPolicyExceptionState_TRUST_POLICY_EXCEPTION_STATE_APPROVAL_REQUESTED:
			default:
				return invalidf("%s: a new exception is APPROVAL_REQUESTED; an admin approves or rejects it", what)
			}
			return nil
		},
		update: func(tx *store.Tx, cur, next *edgeproto.TrustPolicyException, fm *fieldmap.FieldMap) error {
			if cur.Deleting {
				return preconditionf("TrustPolicyException %s is being deleted", cur.GetKeyString())
			}
			if fm.Has(edgeproto.TrustPolicyExceptionFieldState) &&
				next.State == edgeproto.TrustPolicyExceptionState_TRUST_POLICY_EXCEPTION_STATE_UNSPECIFIED {
				return invalidf("TrustPolicyException %s: state must be APPROVAL_REQUESTED, ACTIVE or REJECTED", cur.GetKeyString())
			}
			// Approval, rejection or new rules: the instances follow.
			rulesChanged := fm.HasOrHasChild(edgeproto.TrustPolicyExceptionFieldOutboundSecurityRules) &&
				!proto.Equal(&edgeproto.TrustPolicyException{OutboundSecurityRules: cur.OutboundSecurityRules},
					&edgeproto.TrustPolicyException{OutboundSecurityRules: next.OutboundSecurityRules})
			_, err := c.syncTPE(tx, next, tpeChange{rules: rulesChanged})
			return err
		},
	}
}

// noDependents refuses, naming one, when anything depends on parent.
func (c *Controller) noDependents(tx *store.Tx, parent ref, advice string) error {
	dep, err := c.dependent(tx, parent)
	if err != nil {
		return err
	}
	if dep != "" {
		return preconditionf("%s %s is used by %s: %s", parent.kind, parent.key, dep, advice)
	}
	return nil
}

// setParents declares what each kind depends on (see refs.go).
func (c *Controller) setParents() {
	flavor := func(name string) ref {
		if name == "" {
			return ref{}
		}
		return c.flavors.refOf(&edgeproto.Flavor{Key: &edgeproto.FlavorKey{Name: name}})
	}
	c.cloudlets.parents = func(cl *edgeproto.Cloudlet) []ref {
		if cl.GetTrustPolicy() == "" {
			return nil
		}
		return []ref{c.trustPolicies.refOf(&edgeproto.TrustPolicy{Key: &edgeproto.TrustPolicyKey{
			Organization: cl.GetKey().GetOrganization(), Name: cl.GetTrustPolicy()}})}
	}
	c.cloudletPools.parents = func(p *edgeproto.CloudletPool) []ref {
		out := make([]ref, 0, len(p.GetCloudlets()))
		for _, name := range p.GetCloudlets() {
			out = append(out, c.cloudlets.refOf(&edgeproto.Cloudlet{Key: poolCloudletKey(p.GetKey(), name)}))
		}
		return out
	}
	c.tpes.parents = func(e *edgeproto.TrustPolicyException) []ref {
		return []ref{
			c.apps.refOf(&edgeproto.App{Key: e.GetKey().GetAppKey()}),
			c.cloudletPools.refOf(&edgeproto.CloudletPool{Key: e.GetKey().GetCloudletPoolKey()}),
		}
	}
	c.clusters.parents = func(ci *edgeproto.ClusterInst) []ref {
		return []ref{c.cloudlets.refOf(&edgeproto.Cloudlet{Key: ci.GetCloudletKey()}), flavor(ci.GetFlavorName())}
	}
	c.appInsts.parents = func(ai *edgeproto.AppInst) []ref {
		return []ref{
			c.clusters.refOf(&edgeproto.ClusterInst{Key: ai.GetClusterKey()}),
			c.apps.refOf(&edgeproto.App{Key: ai.GetAppKey()}),
			flavor(ai.GetFlavor()),
		}
	}
}
