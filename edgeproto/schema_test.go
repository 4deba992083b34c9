package edgeproto

import (
	"testing"

	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/edgekit/edgekit/internal/domaintest"
)

// wantKeys lists every message with an object_key field, and that field.
var wantKeys = map[protoreflect.Name]protoreflect.Name{
	"Flavor":               "key",
	"Cloudlet":             "key",
	"CloudletInfo":         "key",
	"ClusterInst":          "key",
	"ClusterInstInfo":      "key",
	"App":                  "key",
	"AppInst":              "key",
	"AppInstInfo":          "key",
	"TrustPolicy":          "key",
	"TrustPolicyException": "key",
	"Alert":                "key",
	"CloudletPool":         "key",
}

// wantListActions lists every message with list_actions.
var wantListActions = map[protoreflect.Name]bool{
	"App": true, "Cloudlet": true, "ClusterInst": true, "TrustPolicy": true, "CloudletPool": true,
}

func TestSchemaOptions(t *testing.T) {
	domaintest.SchemaOptions(t, "edgeproto.v1", wantKeys, wantListActions)
}
