package testpb_test

import (
	"slices"
	"testing"

	"github.com/edgekit/edgekit/fieldmap"
	"github.com/edgekit/edgekit/internal/testpb"
)

// TestAllFieldsMatchSchema checks that every <Msg>AllFields, which the
// generator writes as a literal so that no schema is built at init, lists
// exactly the leaf flags the message's runtime schema computes, in the
// same order: recursion stops, cycles, lists, maps, oneofs, groups and
// deep nesting included.
func TestAllFieldsMatchSchema(t *testing.T) {
	tests := []struct {
		name   string
		all    []string
		schema *fieldmap.Schema
	}{
		{"Scalars", testpb.ScalarsAllFields, (*testpb.Scalars)(nil).FieldSchema()},
		{"Optionals", testpb.OptionalsAllFields, (*testpb.Optionals)(nil).FieldSchema()},
		{"Leaf", testpb.LeafAllFields, (*testpb.Leaf)(nil).FieldSchema()},
		{"Middle", testpb.MiddleAllFields, (*testpb.Middle)(nil).FieldSchema()},
		{"Top", testpb.TopAllFields, (*testpb.Top)(nil).FieldSchema()},
		{"Key", testpb.KeyAllFields, (*testpb.Key)(nil).FieldSchema()},
		{"SubKey", testpb.SubKeyAllFields, (*testpb.SubKey)(nil).FieldSchema()},
		{"Wkt", testpb.WktAllFields, (*testpb.Wkt)(nil).FieldSchema()},
		{"Tree", testpb.TreeAllFields, (*testpb.Tree)(nil).FieldSchema()},
		{"Branch", testpb.BranchAllFields, (*testpb.Branch)(nil).FieldSchema()},
		{"Empty", testpb.EmptyAllFields, (*testpb.Empty)(nil).FieldSchema()},
		{"Outer", testpb.OuterAllFields, (*testpb.Outer)(nil).FieldSchema()},
		{"Secrets", testpb.SecretsAllFields, (*testpb.Secrets)(nil).FieldSchema()},
		{"NamedKey", testpb.NamedKeyAllFields, (*testpb.NamedKey)(nil).FieldSchema()},
		{"Legacy", testpb.LegacyAllFields, (*testpb.Legacy)(nil).FieldSchema()},
		{"Modern", testpb.ModernAllFields, (*testpb.Modern)(nil).FieldSchema()},
		{"Part", testpb.PartAllFields, (*testpb.Part)(nil).FieldSchema()},
		{"Extendable", testpb.ExtendableAllFields, (*testpb.Extendable)(nil).FieldSchema()},
		{"NegZeroHolder", testpb.NegZeroHolderAllFields, (*testpb.NegZeroHolder)(nil).FieldSchema()},
		{"TortureDefaults", testpb.TortureDefaultsAllFields, (*testpb.TortureDefaults)(nil).FieldSchema()},
		{"TortureGroups", testpb.TortureGroupsAllFields, (*testpb.TortureGroups)(nil).FieldSchema()},
		{"TortureLegacyKey", testpb.TortureLegacyKeyAllFields, (*testpb.TortureLegacyKey)(nil).FieldSchema()},
		{"TortureLegacyKey2", testpb.TortureLegacyKey2AllFields, (*testpb.TortureLegacyKey2)(nil).FieldSchema()},
		{"TortureLegacyKeyValue", testpb.TortureLegacyKeyValueAllFields, (*testpb.TortureLegacyKeyValue)(nil).FieldSchema()},
		{"TortureSignHolder", testpb.TortureSignHolderAllFields, (*testpb.TortureSignHolder)(nil).FieldSchema()},
		{"TortureEdition", testpb.TortureEditionAllFields, (*testpb.TortureEdition)(nil).FieldSchema()},
		{"TortureEditionPart", testpb.TortureEditionPartAllFields, (*testpb.TortureEditionPart)(nil).FieldSchema()},
		{"TortureEditionKey", testpb.TortureEditionKeyAllFields, (*testpb.TortureEditionKey)(nil).FieldSchema()},
		{"TortureEditionKeyValue", testpb.TortureEditionKeyValueAllFields, (*testpb.TortureEditionKeyValue)(nil).FieldSchema()},
		{"TortureEditionKeyed", testpb.TortureEditionKeyedAllFields, (*testpb.TortureEditionKeyed)(nil).FieldSchema()},
		{"TortureNames", testpb.TortureNamesAllFields, (*testpb.TortureNames)(nil).FieldSchema()},
		{"TortureLower", testpb.TortureLowerAllFields, (*testpb.TortureLower)(nil).FieldSchema()},
		{"TortureDeep", testpb.TortureDeepAllFields, (*testpb.TortureDeep)(nil).FieldSchema()},
		{"TortureMaps", testpb.TortureMapsAllFields, (*testpb.TortureMaps)(nil).FieldSchema()},
		{"TortureLists", testpb.TortureListsAllFields, (*testpb.TortureLists)(nil).FieldSchema()},
		{"TortureOneofs", testpb.TortureOneofsAllFields, (*testpb.TortureOneofs)(nil).FieldSchema()},
		{"TortureOnlyOneof", testpb.TortureOnlyOneofAllFields, (*testpb.TortureOnlyOneof)(nil).FieldSchema()},
		{"TortureOnlyMap", testpb.TortureOnlyMapAllFields, (*testpb.TortureOnlyMap)(nil).FieldSchema()},
		{"TortureNumbers", testpb.TortureNumbersAllFields, (*testpb.TortureNumbers)(nil).FieldSchema()},
		{"TortureNumbersChild", testpb.TortureNumbersChildAllFields, (*testpb.TortureNumbersChild)(nil).FieldSchema()},
		{"TortureCycleA", testpb.TortureCycleAAllFields, (*testpb.TortureCycleA)(nil).FieldSchema()},
		{"TortureCycleB", testpb.TortureCycleBAllFields, (*testpb.TortureCycleB)(nil).FieldSchema()},
		{"TortureCycleC", testpb.TortureCycleCAllFields, (*testpb.TortureCycleC)(nil).FieldSchema()},
		{"TortureWide", testpb.TortureWideAllFields, (*testpb.TortureWide)(nil).FieldSchema()},
		{"TortureKey", testpb.TortureKeyAllFields, (*testpb.TortureKey)(nil).FieldSchema()},
		{"TortureKeyValue", testpb.TortureKeyValueAllFields, (*testpb.TortureKeyValue)(nil).FieldSchema()},
		{"TortureKeyPart", testpb.TortureKeyPartAllFields, (*testpb.TortureKeyPart)(nil).FieldSchema()},
		{"TortureKeyLeaf", testpb.TortureKeyLeafAllFields, (*testpb.TortureKeyLeaf)(nil).FieldSchema()},
		{"TortureEnumKey", testpb.TortureEnumKeyAllFields, (*testpb.TortureEnumKey)(nil).FieldSchema()},
		{"TortureEmptyKey", testpb.TortureEmptyKeyAllFields, (*testpb.TortureEmptyKey)(nil).FieldSchema()},
		{"TortureOptionalKey", testpb.TortureOptionalKeyAllFields, (*testpb.TortureOptionalKey)(nil).FieldSchema()},
	}
	for _, tt := range tests {
		if len(tt.all) == 0 && len(tt.schema.Leaves()) == 0 {
			continue
		}
		if !slices.Equal(tt.all, tt.schema.Leaves()) {
			t.Errorf("%sAllFields = %q, schema leaves %q", tt.name, tt.all, tt.schema.Leaves())
		}
	}
}
