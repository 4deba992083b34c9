package fluidos

import (
	"testing"

	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/edgekit/edgekit/internal/domaintest"
)

// wantKeys lists every message with an object_key field, and that field.
var wantKeys = map[protoreflect.Name]protoreflect.Name{
	"Flavor":           "id",
	"ServiceBlueprint": "id",
	"Solver":           "id",
	"Discovery":        "id",
	"PeeringCandidate": "id",
	"Reservation":      "id",
	"Transaction":      "id",
	"Contract":         "id",
	"Allocation":       "id",
}

func TestSchemaOptions(t *testing.T) {
	domaintest.SchemaOptions(t, "fluidos.v1", wantKeys, nil)
}
