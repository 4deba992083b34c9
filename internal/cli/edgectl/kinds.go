package edgectl

import (
	"fmt"
	"strings"

	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/internal/cli/output"
)

// Kind is one kind of object edgectl manages: its message, the service
// whose methods act on it, and how a table shows it.
type Kind struct {
	Name    string   // "cloudlet": the message name in lower case
	Aliases []string // plural and short names
	// Object is the kind's message type.
	Object protoreflect.MessageType
	// Info is true for the Info twins: read only, with Show and Watch.
	Info bool
	// Singleton is true for Settings: one object, no key.
	Singleton bool
	Columns   []output.Column

	Service                      protoreflect.ServiceDescriptor
	Create, Update, Delete, Show protoreflect.MethodDescriptor
	Watch, Reset                 protoreflect.MethodDescriptor
	// Actions are the other methods that act on one object of the kind,
	// named by its key: RotateCloudletAccessKey is the action
	// "rotate-access-key" of cloudlets.
	Actions map[string]protoreflect.MethodDescriptor
}

// Desc returns the descriptor of the kind's message.
func (k *Kind) Desc() protoreflect.MessageDescriptor { return k.Object.Descriptor() }

// Names returns the name and the aliases.
func (k *Kind) Names() []string { return append([]string{k.Name}, k.Aliases...) }

// Streams reports whether create, update and delete of the kind stream
// progress (the kinds a resource manager acts on).
func (k *Kind) Streams() bool { return k.Create != nil && k.Create.IsStreamingServer() }

// kindSpec is the hand-written part of a kind: everything else comes from
// the descriptors.
type kindSpec struct {
	object  protoreflect.FullName
	service protoreflect.FullName
	aliases []string
	columns []output.Column
}

// Columns shared by several kinds.
var (
	colOrg      = output.Column{Header: "ORGANIZATION", Path: "key.organization"}
	colName     = output.Column{Header: "NAME", Path: "key.name", Width: 16}
	colState    = output.Column{Header: "STATE", Path: "state"}
	colProgress = output.Column{Header: "PROGRESS", Value: func(m protoreflect.Message) string {
		st, _ := m.Interface().(interface{ GetStatus() *edgeproto.StatusInfo })
		if st == nil {
			return ""
		}
		return st.GetStatus().Render()
	}, Width: 48}
	colErrors = output.Column{Header: "ERRORS", Path: "errors"}
	// colPower is an AppInst's power state, blank while it has none.
	colPower = output.Column{Header: "POWER", Width: len("POWER_OFF_REQUESTED"), Value: func(m protoreflect.Message) string {
		fd := m.Descriptor().Fields().ByName("power_state")
		if fd == nil || !m.Has(fd) {
			return ""
		}
		return output.FormatPath(m, "power_state")
	}}
	colURI = output.Column{Header: "URI", Path: "uri", Width: 24}
)

var kindSpecs = []kindSpec{
	{"edgeproto.v1.Flavor", "edgeproto.v1.FlavorService", []string{"flavors", "fl"}, []output.Column{
		colName, {Header: "VCPUS", Path: "vcpus"}, {Header: "RAM_MB", Path: "ram_mb"}, {Header: "DISK_GB", Path: "disk_gb"}, {Header: "GPUS", Path: "gpus"},
	}},
	{"edgeproto.v1.Cloudlet", "edgeproto.v1.CloudletService", []string{"cloudlets", "cl"}, []output.Column{
		colOrg, colName, {Header: "PLATFORM", Path: "platform_type"}, {Header: "CRM_ON_EDGE", Path: "crm_on_edge"}, colState, colErrors,
	}},
	{"edgeproto.v1.CloudletInfo", "edgeproto.v1.CloudletService", []string{"cloudletinfos"}, []output.Column{
		colOrg, colName, colState, colProgress, colErrors,
	}},
	{"edgeproto.v1.ClusterInst", "edgeproto.v1.ClusterInstService", []string{"clusterinsts", "cluster", "clusters", "ci"}, []output.Column{
		colOrg, colName, {Header: "CLOUDLET", Path: "cloudlet_key.name"}, {Header: "FLAVOR", Path: "flavor_name"}, {Header: "DEPLOYMENT", Path: "deployment"}, colState, colErrors,
	}},
	{"edgeproto.v1.ClusterInstInfo", "edgeproto.v1.ClusterInstService", []string{"clusterinstinfos", "clusterinfo", "clusterinfos"}, []output.Column{
		colOrg, colName, colState, colProgress, colErrors,
	}},
	{"edgeproto.v1.App", "edgeproto.v1.AppService", []string{"apps"}, []output.Column{
		colOrg, colName, {Header: "VERSION", Path: "key.version"}, {Header: "DEPLOYMENT", Path: "deployment"}, {Header: "IMAGE", Path: "image_type"}, {Header: "PORTS", Path: "access_ports"},
	}},
	{"edgeproto.v1.AppInst", "edgeproto.v1.AppInstService", []string{"appinsts", "ai"}, []output.Column{
		colOrg, colName, {Header: "APP", Path: "app_key.name"}, {Header: "CLUSTER", Path: "cluster_key.name"}, {Header: "CLOUDLET", Path: "cloudlet_key.name"}, colState, colPower, colURI, colErrors,
	}},
	{"edgeproto.v1.AppInstInfo", "edgeproto.v1.AppInstService", []string{"appinstinfos"}, []output.Column{
		colOrg, colName, colState, colPower, colProgress, colURI, colErrors,
	}},
	{"edgeproto.v1.TrustPolicy", "edgeproto.v1.TrustPolicyService", []string{"trustpolicies", "tp"}, []output.Column{
		colOrg, colName, {Header: "RULES", Path: "outbound_security_rules"},
	}},
	{"edgeproto.v1.CloudletPool", "edgeproto.v1.CloudletPoolService", []string{"cloudletpools", "pool", "pools"}, []output.Column{
		colOrg, colName, {Header: "CLOUDLETS", Path: "cloudlets"}, {Header: "DEVELOPERS", Path: "developer_organizations"},
	}},
	{"edgeproto.v1.TrustPolicyException", "edgeproto.v1.TrustPolicyExceptionService", []string{"trustpolicyexceptions", "tpe"}, []output.Column{
		{Header: "APP", Path: "key.app_key.name"}, {Header: "POOL", Path: "key.cloudlet_pool_key.name"}, colName, colState,
	}},
	{"edgeproto.v1.Alert", "edgeproto.v1.AlertService", []string{"alerts"}, []output.Column{
		{Header: "ORGANIZATION", Path: "key.cloudlet_key.organization"}, {Header: "CLOUDLET", Path: "key.cloudlet_key.name"},
		{Header: "RESOURCE", Path: "key.resource"}, {Header: "NAME", Path: "name"}, {Header: "USED", Path: "used"}, {Header: "QUOTA", Path: "quota"},
		{Header: "UNITS", Path: "units"}, {Header: "USAGE_%", Path: "usage_percent"}, {Header: "THRESHOLD_%", Path: "threshold"}, {Header: "SINCE", Path: "active_at"},
	}},
	{"edgeproto.v1.Settings", "edgeproto.v1.SettingsService", []string{"setting"}, nil},
}

// LoadKinds builds the kinds from kindSpecs and the descriptors of the
// registered files: each method of a kind's service is matched by its verb
// (the method name's prefix) and the message its request carries.
func LoadKinds() ([]*Kind, error) {
	var kinds []*Kind
	for _, s := range kindSpecs {
		k, err := loadKind(s)
		if err != nil {
			return nil, err
		}
		kinds = append(kinds, k)
	}
	return kinds, nil
}

func loadKind(s kindSpec) (*Kind, error) {
	mt, err := protoregistry.GlobalTypes.FindMessageByName(s.object)
	if err != nil {
		return nil, fmt.Errorf("kind %s: %w", s.object, err)
	}
	d, err := protoregistry.GlobalFiles.FindDescriptorByName(s.service)
	if err != nil {
		return nil, fmt.Errorf("kind %s: service %s: %w", s.object, s.service, err)
	}
	sd, ok := d.(protoreflect.ServiceDescriptor)
	if !ok {
		return nil, fmt.Errorf("kind %s: %s is not a service", s.object, s.service)
	}
	k := &Kind{
		Name:      strings.ToLower(string(s.object.Name())),
		Aliases:   s.aliases,
		Object:    mt,
		Info:      strings.HasSuffix(string(s.object.Name()), "Info"),
		Singleton: s.object == "edgeproto.v1.Settings",
		Columns:   s.columns,
		Service:   sd,
	}
	methods := sd.Methods()
	for i := range methods.Len() {
		m := methods.Get(i)
		if carried(m.Input()) != s.object {
			if name, ok := actionOf(m, mt.Descriptor()); ok && !k.Info {
				if k.Actions == nil {
					k.Actions = map[string]protoreflect.MethodDescriptor{}
				}
				k.Actions[name] = m
			}
			continue
		}
		verb := verbOf(string(m.Name()))
		slot := map[string]*protoreflect.MethodDescriptor{
			"Create": &k.Create, "Update": &k.Update, "Delete": &k.Delete,
			"Show": &k.Show, "Watch": &k.Watch, "Reset": &k.Reset,
		}[verb]
		if slot == nil {
			return nil, fmt.Errorf("kind %s: method %s has no verb edgectl knows", s.object, m.FullName())
		}
		if *slot != nil {
			return nil, fmt.Errorf("kind %s: methods %s and %s both %s it", s.object, (*slot).Name(), m.Name(), verb)
		}
		*slot = m
	}
	if k.Show == nil {
		return nil, fmt.Errorf("kind %s: service %s has no Show method for it", s.object, s.service)
	}
	return k, nil
}

// actionOf reports whether method m acts on one object of md: its request
// carries a key of md's key type, and its name is a verb followed by md's
// name. The action's name is the rest in lower case with dashes, after the
// verb: RotateCloudletAccessKey -> "rotate-access-key".
func actionOf(m protoreflect.MethodDescriptor, md protoreflect.MessageDescriptor) (string, bool) {
	req := m.Input().Fields().ByName("key")
	obj := md.Fields().ByName("key")
	if req == nil || obj == nil || req.Message() == nil || obj.Message() == nil || req.Message().FullName() != obj.Message().FullName() {
		return "", false
	}
	name := string(m.Name())
	verb := verbOf(name)
	rest, ok := strings.CutPrefix(strings.TrimPrefix(name, verb), string(md.Name()))
	if !ok {
		return "", false
	}
	return kebab(verb + rest), true
}

// kebab turns CamelCase into camel-case.
func kebab(s string) string {
	var b strings.Builder
	for i, r := range s {
		if r >= 'A' && r <= 'Z' {
			if i > 0 {
				b.WriteByte('-')
			}
			r += 'a' - 'A'
		}
		b.WriteRune(r)
	}
	return b.String()
}

// verbOf returns the leading capitalised word of a method name.
func verbOf(name string) string {
	for i := 1; i < len(name); i++ {
		if name[i] >= 'A' && name[i] <= 'Z' {
			return name[:i]
		}
	}
	return name
}

// carried returns the message a request is about: the type of its
// "filter" field, of its field named after that type, or of its "key"
// field's object; "" when there is none. ResetSettings and ShowSettings
// carry no message: they are about Settings by their name.
func carried(req protoreflect.MessageDescriptor) protoreflect.FullName {
	fields := req.Fields()
	if fd := fields.ByName("filter"); fd != nil && fd.Message() != nil {
		return fd.Message().FullName()
	}
	for i := range fields.Len() {
		fd := fields.Get(i)
		if fd.Message() != nil && strings.EqualFold(strings.ReplaceAll(string(fd.Name()), "_", ""), string(fd.Message().Name())) {
			return fd.Message().FullName()
		}
	}
	if fd := fields.ByName("key"); (fd != nil && fd.Message() != nil) || fields.Len() == 0 {
		return objectByName(req)
	}
	return ""
}

// objectByName returns the object a <Verb><Obj>Request is about, from its
// name: Delete requests (which carry a key) and requests that carry
// nothing (ResetSettings, ShowSettings).
func objectByName(req protoreflect.MessageDescriptor) protoreflect.FullName {
	name := string(req.Name())
	return req.ParentFile().Package().Append(protoreflect.Name(strings.TrimSuffix(strings.TrimPrefix(name, verbOf(name)), "Request")))
}

// findKind returns the kind called name (or an alias), case-insensitively.
func findKind(kinds []*Kind, name string) *Kind {
	for _, k := range kinds {
		for _, n := range k.Names() {
			if strings.EqualFold(n, name) {
				return k
			}
		}
	}
	return nil
}
