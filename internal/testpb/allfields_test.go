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
// deep nesting included (ChainD01 reaches below the constant depth).
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
		{"ChainD01", testpb.ChainD01AllFields, (*testpb.ChainD01)(nil).FieldSchema()},
		{"ChainD02", testpb.ChainD02AllFields, (*testpb.ChainD02)(nil).FieldSchema()},
		{"ChainD03", testpb.ChainD03AllFields, (*testpb.ChainD03)(nil).FieldSchema()},
		{"ChainD04", testpb.ChainD04AllFields, (*testpb.ChainD04)(nil).FieldSchema()},
		{"ChainD05", testpb.ChainD05AllFields, (*testpb.ChainD05)(nil).FieldSchema()},
		{"ChainD06", testpb.ChainD06AllFields, (*testpb.ChainD06)(nil).FieldSchema()},
		{"ChainD07", testpb.ChainD07AllFields, (*testpb.ChainD07)(nil).FieldSchema()},
		{"ChainD08", testpb.ChainD08AllFields, (*testpb.ChainD08)(nil).FieldSchema()},
		{"ChainD09", testpb.ChainD09AllFields, (*testpb.ChainD09)(nil).FieldSchema()},
		{"ChainD10", testpb.ChainD10AllFields, (*testpb.ChainD10)(nil).FieldSchema()},
		{"ChainD11", testpb.ChainD11AllFields, (*testpb.ChainD11)(nil).FieldSchema()},
		{"ChainD12", testpb.ChainD12AllFields, (*testpb.ChainD12)(nil).FieldSchema()},
		{"ChainD13", testpb.ChainD13AllFields, (*testpb.ChainD13)(nil).FieldSchema()},
		{"ChainD14", testpb.ChainD14AllFields, (*testpb.ChainD14)(nil).FieldSchema()},
		{"ChainD15", testpb.ChainD15AllFields, (*testpb.ChainD15)(nil).FieldSchema()},
		{"ChainD16", testpb.ChainD16AllFields, (*testpb.ChainD16)(nil).FieldSchema()},
		{"ChainD17", testpb.ChainD17AllFields, (*testpb.ChainD17)(nil).FieldSchema()},
		{"ChainD18", testpb.ChainD18AllFields, (*testpb.ChainD18)(nil).FieldSchema()},
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
