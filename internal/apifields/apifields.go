package apifields

import (
	"fmt"
	"strings"

	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/edgekit/edgekit/edgeproto"
)

// Access says who may write a field.
type Access uint8

const (
	// Settable fields are set on create and changed by update.
	Settable Access = iota
	// Key fields name the object: set on create, never changed.
	Key
	// CreateOnly fields are set on create and never changed.
	CreateOnly
	// Owned fields are written by the controller or a resource manager only.
	Owned
)

func (a Access) String() string {
	switch a {
	case Settable:
		return "settable"
	case Key:
		return "key"
	case CreateOnly:
		return "create-only"
	case Owned:
		return "owned"
	}
	return fmt.Sprintf("Access(%d)", uint8(a))
}

// CanCreate reports whether a user may set a field of this Access on create.
func (a Access) CanCreate() bool { return a != Owned }

// CanUpdate reports whether a user may change a field of this Access with an
// update.
func (a Access) CanUpdate() bool { return a == Settable }

// Table is a set of access rules: per message, the Access of listed flags
// (and so of everything below them), and the messages owned as a whole.
type Table struct {
	// Rules maps a message to the Access of its listed flags. A message
	// in Rules with no flags is Settable throughout.
	Rules map[protoreflect.FullName]map[string]Access
	// Owned lists the messages users never write at all.
	Owned map[protoreflect.FullName]bool
}

// Default is the table of the controller's API (package edgeproto).
var Default = &Table{Rules: rules, Owned: owned}

var rules = map[protoreflect.FullName]map[string]Access{
	"edgeproto.v1.Cloudlet": {
		edgeproto.CloudletFieldKey:                       Key,
		edgeproto.CloudletFieldState:                     Owned,
		edgeproto.CloudletFieldErrors:                    Owned,
		edgeproto.CloudletFieldPlatformType:              CreateOnly,
		edgeproto.CloudletFieldConfigCrmAccessPrivateKey: Owned, // issued by the controller
		edgeproto.CloudletFieldCrmOnEdge:                 CreateOnly,
		edgeproto.CloudletFieldTrustPolicyState:          Owned,
		edgeproto.CloudletFieldCreatedAt:                 Owned,
		edgeproto.CloudletFieldUpdatedAt:                 Owned,
		edgeproto.CloudletFieldRequestId:                 Owned, // the controller's id of the latest request
	},
	"edgeproto.v1.ClusterInst": {
		edgeproto.ClusterInstFieldKey:         Key,
		edgeproto.ClusterInstFieldCloudletKey: CreateOnly,
		edgeproto.ClusterInstFieldState:       Owned,
		edgeproto.ClusterInstFieldErrors:      Owned,
		edgeproto.ClusterInstFieldDeployment:  CreateOnly,
		edgeproto.ClusterInstFieldResources:   Owned, // what the platform created
		edgeproto.ClusterInstFieldReservedBy:  Owned, // set when an application reserves the cluster
		edgeproto.ClusterInstFieldCreatedAt:   Owned,
		edgeproto.ClusterInstFieldUpdatedAt:   Owned,
		edgeproto.ClusterInstFieldRequestId:   Owned, // the controller's id of the latest request
	},
	"edgeproto.v1.App": {
		edgeproto.AppFieldKey:       Key,
		edgeproto.AppFieldCreatedAt: Owned,
		edgeproto.AppFieldUpdatedAt: Owned,
	},
	"edgeproto.v1.AppInst": {
		edgeproto.AppInstFieldKey:         Key,
		edgeproto.AppInstFieldAppKey:      CreateOnly,
		edgeproto.AppInstFieldClusterKey:  CreateOnly,
		edgeproto.AppInstFieldCloudletKey: CreateOnly,
		edgeproto.AppInstFieldState:       Owned,
		edgeproto.AppInstFieldErrors:      Owned,
		edgeproto.AppInstFieldUri:         Owned,
		edgeproto.AppInstFieldMappedPorts: Owned,
		edgeproto.AppInstFieldRuntimeInfo: Owned,
		edgeproto.AppInstFieldCreatedAt:   Owned,
		edgeproto.AppInstFieldUpdatedAt:   Owned,
		edgeproto.AppInstFieldRequestId:   Owned, // the controller's id of the latest request
	},
	"edgeproto.v1.Flavor": {
		edgeproto.FlavorFieldKey: Key,
	},
	"edgeproto.v1.TrustPolicy": {
		edgeproto.TrustPolicyFieldKey: Key,
	},
	"edgeproto.v1.TrustPolicyException": {
		edgeproto.TrustPolicyExceptionFieldKey:       Key,
		edgeproto.TrustPolicyExceptionFieldInstances: Owned, // one entry per instance the controller applied it to
		edgeproto.TrustPolicyExceptionFieldDeleting:  Owned, // set by a delete while instances still hold it
	},
	"edgeproto.v1.CloudletPool": {
		edgeproto.CloudletPoolFieldKey:       Key,
		edgeproto.CloudletPoolFieldCreatedAt: Owned,
		edgeproto.CloudletPoolFieldUpdatedAt: Owned,
	},
	"edgeproto.v1.Settings": {},
}

var owned = map[protoreflect.FullName]bool{
	"edgeproto.v1.CloudletInfo":    true,
	"edgeproto.v1.ClusterInstInfo": true,
	"edgeproto.v1.AppInstInfo":     true,
	"edgeproto.v1.Alert":           true, // raised and cleared by the controller alone
}

// Known reports whether Default has an entry for the message (an object or
// an Info twin of the controller's API).
func Known(message protoreflect.FullName) bool { return Default.Known(message) }

// Of returns the Access Default gives the field a flag names in message.
func Of(message protoreflect.FullName, flag string) Access { return Default.Of(message, flag) }

// Known reports whether the table has an entry for the message.
func (t *Table) Known(message protoreflect.FullName) bool {
	_, ok := t.Rules[message]
	return ok || t.Owned[message]
}

// Of returns the Access of the field a flag names in message: the Access of
// the flag or of its nearest listed ancestor; Settable when none is listed.
// A list action suffix (":add") is ignored. The flag is not checked against
// the message's schema.
func (t *Table) Of(message protoreflect.FullName, flag string) Access {
	if t.Owned[message] {
		return Owned
	}
	r := t.Rules[message]
	f, _, _ := strings.Cut(flag, ":") // a list action does not change who may write
	for f != "" {
		if a, ok := r[f]; ok {
			return a
		}
		i := strings.LastIndexByte(f, '.')
		if i < 0 {
			break
		}
		f = f[:i]
	}
	return Settable
}
