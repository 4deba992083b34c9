package allocator

import (
	"context"
	"errors"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/fluidos"
	"github.com/edgekit/edgekit/internal/store"
)

// LabelServiceCredentials "true" marks the Secret that hands a buyer the
// credentials of a service it bought, as the FLUIDOS reference labels it.
const LabelServiceCredentials = "nodecore.fluidos.eu/flavor-service-credentials"

// sharedMark joins, in the name of the App and instance that put a
// service's credentials into a slice, the slice's allocation and the
// service's: "<slice>.credentials.<service>". Owned by the slice (see
// ownerOf), they go with it; a buyer's own instances on a slice cannot
// have a dot in their names, so no name of theirs is one of these.
const sharedMark = ".credentials."

// CredentialsSecretName is the name of the Secret that holds the
// credentials of the service bought under contract in its buyer's slice.
func CredentialsSecretName(contract string) string {
	var b strings.Builder
	b.WriteString("credentials-")
	for _, r := range strings.ToLower(contract) {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') || r == '-' || r == '.' {
			b.WriteRune(r)
		} else {
			b.WriteByte('-')
		}
	}
	s := strings.TrimRight(b.String(), "-.")
	if len(s) > 253 {
		s = strings.TrimRight(s[:253], "-.")
	}
	return s
}

// sharedName is the name of the objects that put service's credentials
// into slice.
func sharedName(slice, service string) string { return slice + sharedMark + service }

// sharedOf tells whether name is one of those objects of service.
func sharedOf(name, service string) bool {
	_, svc, ok := strings.Cut(name, sharedMark)
	return ok && svc == service
}

// shareCredentials puts the credentials of a service of Kubernetes
// manifests into every slice of this node its buyer holds (ACTIVE, not
// being released): a Secret named CredentialsSecretName(contract) in the
// slice's namespace, labelled with the contract and
// LabelServiceCredentials, holding endpoints, username, password and (for
// the database category) database, as the reference's Secret. It is an
// instance of an App given as that manifest, on the slice's cluster,
// through the engine: the service's release deletes it, and so does the
// slice's (it is the slice's object). A slice bought later gets it at
// the next health check. Failures are logged and tried again at the next
// check: they never fail the service.
func (a *Allocator) shareCredentials(ctx context.Context, al *fluidos.Allocation, c *fluidos.Contract, creds *fluidos.PeeringTargetCredentials) {
	if !a.cfg.Platform.Features().IsSingleKubernetesCluster {
		return
	}
	all, _, err := a.ledger.Allocations().List(ctx)
	if err != nil {
		a.log.WarnContext(ctx, "listing slices to share a service's credentials", "allocation", al.GetId(), "err", err)
		return
	}
	for _, s := range all {
		if s.GetFlavorType() != fluidos.FlavorType_FLAVOR_TYPE_K8SLICE || s.GetBuyer().GetNodeId() != al.GetBuyer().GetNodeId() ||
			ended(s) || s.GetReleaseRequested() || s.GetStatus().GetState() != fluidos.AllocationState_ALLOCATION_STATE_ACTIVE {
			continue
		}
		if err := a.shareInto(ctx, s, al, c, creds); err != nil {
			a.log.WarnContext(ctx, "putting a service's credentials into its buyer's slice", "allocation", al.GetId(), "slice", s.GetId(), "err", err)
		}
	}
}

// shareInto puts the Secret of service's credentials into slice.
func (a *Allocator) shareInto(ctx context.Context, slice, service *fluidos.Allocation, c *fluidos.Contract, creds *fluidos.PeeringTargetCredentials) error {
	name := sharedName(slice.GetId(), service.GetId())
	data := map[string]string{"endpoints": creds.GetEndpoints(), "username": creds.GetUsername(), "password": creds.GetPassword()}
	if c.GetFlavor().GetService().GetCategory() == CategoryDatabase {
		data["database"] = creds.GetDatabase()
	}
	manifest, err := yaml.Marshal(map[string]any{
		"apiVersion": "v1",
		"kind":       "Secret",
		"type":       "Opaque",
		"metadata": map[string]any{
			"name":   CredentialsSecretName(service.GetContractId()),
			"labels": map[string]string{LabelContract: service.GetContractId(), LabelServiceCredentials: "true"},
		},
		"stringData": data,
	})
	if err != nil {
		return err
	}
	app := &edgeproto.App{
		Key:                &edgeproto.AppKey{Organization: service.GetBuyer().GetNodeId(), Name: name, Version: "1"},
		Deployment:         "kubernetes",
		ImageType:          edgeproto.ImageType_IMAGE_TYPE_NONE,
		DeploymentManifest: string(manifest),
	}
	cluster := clusterKey(slice)
	cluster.CloudletKey = a.cloudlet.GetKey()
	want := &edgeproto.AppInst{
		Key:         &edgeproto.AppInstKey{Organization: service.GetBuyer().GetNodeId(), Name: name},
		AppKey:      app.GetKey(),
		ClusterKey:  cluster.GetKey(),
		CloudletKey: a.cloudlet.GetKey(),
		PowerState:  edgeproto.PowerState_POWER_STATE_POWER_ON,
	}
	// Under the slice's lock, while the slice is not being released: its
	// teardown passes the lock once the release is asked, then finds the
	// instance and deletes it, and nothing here creates it again after.
	mu := a.sliceLock(slice.GetId())
	mu.Lock()
	defer mu.Unlock()
	cur, _, err := a.ledger.Allocations().Get(ctx, slice.GetId())
	if err != nil || cur.GetReleaseRequested() || ended(cur) {
		return err
	}
	if _, err := a.objs.apps.Create(ctx, app); err != nil && !errors.Is(err, store.ErrAlreadyExists) {
		return err
	}
	_, err = ensureReady(ctx, a, a.instKind(), want)
	return err
}
