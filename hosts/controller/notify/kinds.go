package notify

import (
	"fmt"
	"strings"

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/internal/store"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
)

// settingsName is the key, under the region's prefix, of the region's
// single Settings object (the controller keeps it outside any kind).
const settingsName = "Settings"

// accessKeyKind is the prefix, under the region's, of the hashes of the
// cloudlets' access keys.
const accessKeyKind = "CloudletAccessKey"

// kindDef is one kind of object a CRM receives, as the watch of the region
// sees it.
type kindDef struct {
	name string
	// decode reads the stored value of a key string, through the store's
	// own decoding (so an encrypted value is opened, and one that does not
	// open is an error naming its key).
	decode func(key string, data []byte) (proto.Message, error)
	// stub is the object of a key string carrying only its key: what a
	// delete sends.
	stub func(key string) (proto.Message, error)
	// route names the sessions a change of the kind concerns (see route).
	route route
}

// defOf describes kind k; without a route its changes go to every session.
func defOf[T store.Object[T], K any](k *store.Kind[T], parse func(string) (K, error), withKey func(K) T, r ...route) *kindDef {
	d := &kindDef{
		name:  k.Name(),
		route: routeAll,
		decode: func(key string, data []byte) (proto.Message, error) {
			obj, err := k.Decode(key, data)
			if err != nil {
				return nil, err
			}
			return obj, nil
		},
		stub: func(key string) (proto.Message, error) {
			km, err := parse(key)
			if err != nil {
				return nil, err
			}
			return withKey(km), nil
		},
	}
	if len(r) > 0 {
		d.route = r[0]
	}
	return d
}

// kinds are the store kinds the server reads.
type kinds struct {
	prefix        string // the region's: "/edgekit/<region>/"
	settingsPath  string
	flavors       *store.Kind[*edgeproto.Flavor]
	cloudlets     *store.Kind[*edgeproto.Cloudlet]
	trustPolicies *store.Kind[*edgeproto.TrustPolicy]
	apps          *store.Kind[*edgeproto.App]
	clusters      *store.Kind[*edgeproto.ClusterInst]
	appInsts      *store.Kind[*edgeproto.AppInst]
	tpes          *store.Kind[*edgeproto.TrustPolicyException]
	byName        map[string]*kindDef
	order         []*kindDef // as listed: a CRM's dependencies (Apps) before what needs them
}

func newKinds(s *store.Store) *kinds {
	k := &kinds{
		prefix:        s.Prefix(),
		settingsPath:  s.Prefix() + settingsName,
		flavors:       store.NewKind[*edgeproto.Flavor](s),
		cloudlets:     store.NewKind[*edgeproto.Cloudlet](s),
		trustPolicies: store.NewKind[*edgeproto.TrustPolicy](s),
		apps:          store.NewKind[*edgeproto.App](s),
		clusters:      store.NewKind[*edgeproto.ClusterInst](s),
		appInsts:      store.NewKind[*edgeproto.AppInst](s),
		tpes:          store.NewKind[*edgeproto.TrustPolicyException](s),
	}
	k.byName = map[string]*kindDef{}
	// One line a kind the CRMs receive, with the sessions its changes
	// concern: every session, the session of the object's own cloudlet,
	// those of its organization's cloudlets, those of the cloudlet it is
	// placed on, or those of the cloudlets of its entries (before and
	// after the change).
	for _, d := range []*kindDef{
		defOf(k.flavors, edgeproto.ParseFlavorKeyString, func(key *edgeproto.FlavorKey) *edgeproto.Flavor { return &edgeproto.Flavor{Key: key} },
			routeAll),
		defOf(k.cloudlets, edgeproto.ParseCloudletKeyString, func(key *edgeproto.CloudletKey) *edgeproto.Cloudlet { return &edgeproto.Cloudlet{Key: key} },
			routeOwnCloudlet),
		defOf(k.trustPolicies, edgeproto.ParseTrustPolicyKeyString, func(key *edgeproto.TrustPolicyKey) *edgeproto.TrustPolicy {
			return &edgeproto.TrustPolicy{Key: key}
		}, routeOrganization(func(o *edgeproto.TrustPolicy) string { return o.GetKey().GetOrganization() })),
		defOf(k.apps, edgeproto.ParseAppKeyString, func(key *edgeproto.AppKey) *edgeproto.App { return &edgeproto.App{Key: key} },
			routeAll),
		defOf(k.clusters, edgeproto.ParseClusterInstKeyString, func(key *edgeproto.ClusterKey) *edgeproto.ClusterInst {
			return &edgeproto.ClusterInst{Key: key}
		}, routePlaced(func(o *edgeproto.ClusterInst) *edgeproto.CloudletKey { return o.GetCloudletKey() })),
		defOf(k.appInsts, edgeproto.ParseAppInstKeyString, func(key *edgeproto.AppInstKey) *edgeproto.AppInst { return &edgeproto.AppInst{Key: key} },
			routePlaced(func(o *edgeproto.AppInst) *edgeproto.CloudletKey { return o.GetCloudletKey() })),
		defOf(k.tpes, edgeproto.ParseTrustPolicyExceptionKeyString, func(key *edgeproto.TrustPolicyExceptionKey) *edgeproto.TrustPolicyException {
			return &edgeproto.TrustPolicyException{Key: key}
		}, routeSpread(tpeCloudlets)),
	} {
		k.byName[d.name] = d
		k.order = append(k.order, d)
	}
	return k
}

// split parses a key of the region: the kind's name and the object's key
// string ("" for the settings); false for keys of no kind.
func (k *kinds) split(path string) (kind, key string, ok bool) {
	rest, ok := strings.CutPrefix(path, k.prefix)
	if !ok {
		return "", "", false
	}
	if rest == settingsName {
		return settingsName, "", true
	}
	return strings.Cut(rest, "/")
}

func decodeSettings(data []byte) (*edgeproto.Settings, error) {
	s := &edgeproto.Settings{}
	if len(data) == 0 {
		return s, nil
	}
	if err := (protojson.UnmarshalOptions{DiscardUnknown: true}).Unmarshal(data, s); err != nil {
		return nil, fmt.Errorf("%s: %w: %w", settingsName, store.ErrBadValue, err)
	}
	return s, nil
}
