package executor

import (
	"fmt"
	"strconv"
	"unicode"
	"unicode/utf8"

	"github.com/edgekit/edgekit/edgeproto"
)

// Limits of what the engine accepts as keys and ports. Submit checks every
// key of an object that asks to be created or updated against them (and
// the engine checks the App's ports before creating or updating an
// AppInst), so platforms never see a key they could not represent. A
// delete is never refused for its key: deleting what could never have been
// created succeeds on every platform.
const (
	// MaxKeyFieldLen is the longest key field (an organization, a name, a
	// version), in bytes of UTF-8.
	MaxKeyFieldLen = 128
	// MinPort and MaxPort bound internal_port and end_port of an App's
	// ports.
	MinPort, MaxPort = 1, 65535
)

// ValidationError says what is wrong with one field of a submitted object.
// It matches ErrBadObject. Its message quotes at most the first 32 bytes of
// a bad value, so a huge key never ends up whole in logs and reports.
type ValidationError struct {
	// Field is the path of the field, for example "ClusterInst.key.name".
	Field string
	// Problem says what is wrong ("is empty", "is 300 bytes long...").
	Problem string
}

// Error reads "ClusterInst.key.name is empty".
func (e *ValidationError) Error() string { return e.Field + " " + e.Problem }

// Is matches ErrBadObject.
func (e *ValidationError) Is(target error) bool { return target == ErrBadObject }

// field is one key field to check: its path, its value and whether it may
// be empty.
type field struct {
	path, value string
	optional    bool
}

// checkFields returns the error of the first field that breaks the limits.
func checkFields(fields ...field) error {
	for _, f := range fields {
		if err := checkField(f); err != nil {
			return err
		}
	}
	return nil
}

func checkField(f field) error {
	switch {
	case f.value == "":
		if f.optional {
			return nil
		}
		return &ValidationError{Field: f.path, Problem: "is empty"}
	case len(f.value) > MaxKeyFieldLen:
		return &ValidationError{Field: f.path, Problem: fmt.Sprintf("is %d bytes long (%s); the limit is %d", len(f.value), quoteShort(f.value), MaxKeyFieldLen)}
	case !utf8.ValidString(f.value):
		return &ValidationError{Field: f.path, Problem: fmt.Sprintf("is not valid UTF-8 (%s)", quoteShort(f.value))}
	}
	for _, r := range f.value {
		if unicode.IsControl(r) {
			return &ValidationError{Field: f.path, Problem: fmt.Sprintf("holds the control character %U (%s)", r, quoteShort(f.value))}
		}
	}
	return nil
}

// quoteShort quotes s, cut to its first 32 bytes.
func quoteShort(s string) string {
	const max = 32
	if len(s) <= max {
		return strconv.Quote(s)
	}
	return strconv.Quote(s[:max]) + "..."
}

func cloudletKeyFields(path string, k *edgeproto.CloudletKey) []field {
	return []field{{path: path + ".organization", value: k.GetOrganization()}, {path: path + ".name", value: k.GetName()}}
}

func clusterKeyFields(path string, k *edgeproto.ClusterKey) []field {
	return []field{{path: path + ".organization", value: k.GetOrganization()}, {path: path + ".name", value: k.GetName()}}
}

// ValidateKeys checks the keys of a Cloudlet, ClusterInst, AppInst or
// TrustPolicyException against the limits: every organization and name
// non-empty (an App's version and a TrustPolicyException's app and pool
// keys may be empty), at most MaxKeyFieldLen bytes, valid UTF-8 without
// control characters. Other objects have nothing to check. The error is a
// *ValidationError naming the first bad field.
func ValidateKeys(obj any) error {
	var fields []field
	switch o := obj.(type) {
	case *edgeproto.Cloudlet:
		fields = cloudletKeyFields("Cloudlet.key", o.GetKey())
	case *edgeproto.ClusterInst:
		fields = append(clusterKeyFields("ClusterInst.key", o.GetKey()), cloudletKeyFields("ClusterInst.cloudlet_key", o.GetCloudletKey())...)
	case *edgeproto.AppInst:
		fields = []field{
			{path: "AppInst.key.organization", value: o.GetKey().GetOrganization()},
			{path: "AppInst.key.name", value: o.GetKey().GetName()},
			{path: "AppInst.app_key.organization", value: o.GetAppKey().GetOrganization()},
			{path: "AppInst.app_key.name", value: o.GetAppKey().GetName()},
			{path: "AppInst.app_key.version", value: o.GetAppKey().GetVersion(), optional: true},
		}
		fields = append(fields, clusterKeyFields("AppInst.cluster_key", o.GetClusterKey())...)
		fields = append(fields, cloudletKeyFields("AppInst.cloudlet_key", o.GetCloudletKey())...)
	case *edgeproto.TrustPolicyException:
		k := o.GetKey()
		fields = []field{
			{path: "TrustPolicyException.key.name", value: k.GetName()},
			{path: "TrustPolicyException.key.app_key.organization", value: k.GetAppKey().GetOrganization(), optional: true},
			{path: "TrustPolicyException.key.app_key.name", value: k.GetAppKey().GetName(), optional: true},
			{path: "TrustPolicyException.key.app_key.version", value: k.GetAppKey().GetVersion(), optional: true},
			{path: "TrustPolicyException.key.cloudlet_pool_key.organization", value: k.GetCloudletPoolKey().GetOrganization(), optional: true},
			{path: "TrustPolicyException.key.cloudlet_pool_key.name", value: k.GetCloudletPoolKey().GetName(), optional: true},
		}
	}
	return checkFields(fields...)
}

// ValidatePorts checks an App's ports: a known protocol, internal_port in
// MinPort..MaxPort, end_port 0 (a single port) or in
// internal_port..MaxPort. The error is a *ValidationError naming the port
// by its index.
func ValidatePorts(ports []*edgeproto.Port) error {
	for i, p := range ports {
		path := "App.ports[" + strconv.Itoa(i) + "]"
		if _, known := edgeproto.PortProtocol_name[int32(p.GetProto())]; !known {
			return &ValidationError{Field: path + ".proto", Problem: fmt.Sprintf("is %d, not a known protocol", p.GetProto())}
		}
		if in := p.GetInternalPort(); in < MinPort || in > MaxPort {
			return &ValidationError{Field: path + ".internal_port", Problem: fmt.Sprintf("is %d, outside %d-%d", in, MinPort, MaxPort)}
		}
		if end := p.GetEndPort(); end != 0 && (end < p.GetInternalPort() || end > MaxPort) {
			return &ValidationError{Field: path + ".end_port", Problem: fmt.Sprintf("is %d, want 0 or %d-%d", end, p.GetInternalPort(), MaxPort)}
		}
	}
	return nil
}

// validateRequest is the check Submit runs: the keys of an object asking
// to be created or updated (anything but a delete).
func validateRequest(obj any, state edgeproto.TrackedState) error {
	if state == edgeproto.TrackedState_TRACKED_STATE_DELETE_REQUESTED {
		return nil
	}
	return ValidateKeys(obj)
}
