package region

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/platforms/kubernetes"
	"github.com/edgekit/edgekit/platforms/local"
)

// cloudletSpec is one of the region's cloudlets.
type cloudletSpec struct {
	name string
	// crm: served by a CRM on the edge site; else by the CCRM replicas.
	crm bool
	// platform is the cloudlet's platform type; "" is the local platform.
	platform string
	// accessVars are the cloudlet's access variables (secrets).
	accessVars map[string]string
}

// platformType is the cloudlet's platform type.
func (c cloudletSpec) platformType() string {
	if c.platform == "" {
		return local.PlatformType
	}
	return c.platform
}

// k8sCloudlet is the cloudlet of the cluster of kubeconfig (its content).
func k8sCloudlet(kubeconfig []byte) cloudletSpec {
	return cloudletSpec{name: KubernetesCloudlet, platform: kubernetes.PlatformType,
		accessVars: map[string]string{kubernetes.AccessVarKubeconfig: string(kubeconfig)}}
}

var cloudlets = []cloudletSpec{{name: EdgeCloudlet, crm: true}, {name: OffsiteCloudlet}}

func (c cloudletSpec) key() *edgeproto.CloudletKey {
	return &edgeproto.CloudletKey{Organization: Operator, Name: c.name}
}

// manager names what serves the cloudlet.
func (c cloudletSpec) manager() string {
	if c.crm {
		return "CRM"
	}
	return "CCRM"
}

// platformProperties configure the local platform of cloudlet name: its
// port range and a short stop grace.
func platformProperties(name string) map[string]string {
	r := portRanges[name]
	return map[string]string{local.PropPortMin: strconv.Itoa(r[0]), local.PropPortMax: strconv.Itoa(r[1]), local.PropStopGrace: "5s"}
}

// regionFlavor is the region's flavor: the local platform's local.small,
// which the region's cloudlets (all on the local platform) report in their
// CloudletInfo; show flavors and show cloudletinfos must agree on it.
func regionFlavor() *edgeproto.Flavor {
	return &edgeproto.Flavor{Key: &edgeproto.FlavorKey{Name: Flavor}, Vcpus: 1, RamMb: 2048, DiskGb: 10}
}

// flavorSize are the fields of a flavor that say its size.
var flavorSize = []string{edgeproto.FlavorFieldVcpus, edgeproto.FlavorFieldRamMb, edgeproto.FlavorFieldDiskGb}

// ensureFlavor creates the region's flavor, or gives one an earlier up
// created the size of regionFlavor (earlier versions made it 1024 MB).
func ensureFlavor(ctx context.Context, a *api) error {
	want := regionFlavor()
	_, err := a.flavors.CreateFlavor(ctx, &edgeproto.CreateFlavorRequest{Flavor: want})
	if status.Code(err) != codes.AlreadyExists {
		if err != nil {
			return fmt.Errorf("flavor %s: %w", Flavor, err)
		}
		return nil
	}
	s, err := a.flavors.ShowFlavors(ctx, &edgeproto.ShowFlavorsRequest{Filter: &edgeproto.Flavor{Key: want.GetKey()}})
	if err != nil {
		return fmt.Errorf("flavor %s: %w", Flavor, err)
	}
	got, err := last(collect(s, (*edgeproto.ShowFlavorsResponse).GetFlavor))
	if err != nil || got == nil {
		return fmt.Errorf("flavor %s: exists but cannot be shown: %v", Flavor, err)
	}
	if got.GetVcpus() == want.GetVcpus() && got.GetRamMb() == want.GetRamMb() && got.GetDiskGb() == want.GetDiskGb() {
		return nil
	}
	if _, err := a.flavors.UpdateFlavor(ctx, &edgeproto.UpdateFlavorRequest{Flavor: want, Fields: flavorSize}); err != nil {
		return fmt.Errorf("flavor %s: correcting its size: %w", Flavor, err)
	}
	return nil
}

// showCloudlet returns the cloudlet of key, or nil when there is none.
func showCloudlet(ctx context.Context, a *api, key *edgeproto.CloudletKey) (*edgeproto.Cloudlet, error) {
	s, err := a.cloudlets.ShowCloudlets(ctx, &edgeproto.ShowCloudletsRequest{Filter: &edgeproto.Cloudlet{Key: key}})
	if err != nil {
		return nil, err
	}
	return last(collect(s, (*edgeproto.ShowCloudletsResponse).GetCloudlet))
}

// ensureCloudlet creates the cloudlet unless it exists (without waiting
// for its resource manager), and for a CRM-served one makes sure its
// access key is in keyFile: written at create, or rotated when the file
// was lost. It reports whether it created the cloudlet.
func ensureCloudlet(ctx context.Context, a *api, c cloudletSpec, keyFile string) (bool, error) {
	cl, err := showCloudlet(ctx, a, c.key())
	if err != nil {
		return false, fmt.Errorf("cloudlet %s: %w", c.name, err)
	}
	if cl != nil {
		if !c.crm {
			return false, nil
		}
		if _, err := os.Stat(keyFile); err == nil {
			return false, nil
		}
		resp, err := a.cloudlets.RotateCloudletAccessKey(ctx, &edgeproto.RotateCloudletAccessKeyRequest{Key: c.key()})
		if err != nil {
			return false, fmt.Errorf("cloudlet %s: rotating its lost access key: %w", c.name, err)
		}
		return false, writeSecret(keyFile, resp.GetCrmAccessKey())
	}
	req := &edgeproto.Cloudlet{Key: c.key(), PlatformType: c.platformType(), CrmOnEdge: c.crm, AccessVars: c.accessVars}
	if !c.crm && c.platform == "" {
		req.EnvVars = platformProperties(c.name)
	}
	s, err := a.cloudlets.CreateCloudlet(ctx, &edgeproto.CreateCloudletRequest{Cloudlet: req, NoWait: true})
	if err != nil {
		return false, fmt.Errorf("cloudlet %s: %w", c.name, err)
	}
	keys, err := collect(s, (*edgeproto.CreateCloudletResponse).GetCrmAccessKey)
	if err != nil {
		return false, fmt.Errorf("cloudlet %s: %w", c.name, err)
	}
	for _, k := range keys {
		if k != "" {
			if err := writeSecret(keyFile, k); err != nil {
				return false, err
			}
		}
	}
	if c.crm {
		if _, err := os.Stat(keyFile); err != nil {
			return false, fmt.Errorf("cloudlet %s: created without an access key", c.name)
		}
	}
	return true, nil
}

// writeSecret writes a secret to path, readable by its owner only.
func writeSecret(path, secret string) error {
	if err := os.WriteFile(path, []byte(secret+"\n"), 0o600); err != nil {
		return fmt.Errorf("region: %w", err)
	}
	return nil
}

// cloudletInfo returns the Info of the cloudlet of key, or nil.
func cloudletInfo(ctx context.Context, a *api, key *edgeproto.CloudletKey) (*edgeproto.CloudletInfo, error) {
	s, err := a.cloudlets.ShowCloudletInfos(ctx, &edgeproto.ShowCloudletInfosRequest{Filter: &edgeproto.CloudletInfo{Key: key}})
	if err != nil {
		return nil, err
	}
	return last(collect(s, (*edgeproto.ShowCloudletInfosResponse).GetCloudletInfo))
}

// waitCloudletReady polls the cloudlet until it is READY and, when since
// is not zero, its resource manager reported its Info after since (a CRM
// that started then has connected and synchronised); an error state fails
// at once.
func waitCloudletReady(ctx context.Context, a *api, key *edgeproto.CloudletKey, since time.Time) error {
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	var last edgeproto.TrackedState
	for {
		cl, err := showCloudlet(ctx, a, key)
		if err == nil && cl != nil {
			last = cl.GetState()
			switch last {
			case edgeproto.TrackedState_TRACKED_STATE_READY:
				if since.IsZero() {
					return nil
				}
				info, err := cloudletInfo(ctx, a, key)
				if err == nil && info.GetState() == edgeproto.CloudletState_CLOUDLET_STATE_READY && !info.GetUpdatedAt().AsTime().Before(since) {
					return nil
				}
			case edgeproto.TrackedState_TRACKED_STATE_CREATE_ERROR, edgeproto.TrackedState_TRACKED_STATE_UPDATE_ERROR,
				edgeproto.TrackedState_TRACKED_STATE_DELETE_ERROR:
				return fmt.Errorf("cloudlet %s is %s: %v", key.GetName(), last, cl.GetErrors())
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("cloudlet %s not READY (last %s): %w", key.GetName(), last, context.Cause(ctx))
		case <-tick.C:
		}
	}
}
