package gentest_test

import (
	"flag"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/edgekit/edgekit/gentest"
)

var update = flag.Bool("update", false, "rewrite the golden files of testdata/golden")

// TestGenerated is how a user golden-tests the plugin's output on their
// protos: testdata/proto holds them, testdata/golden what the plugin
// generates, checked in. go test -update rewrites the golden files.
func TestGenerated(t *testing.T) {
	gentest.Check(t, gentest.Config{
		ImportPaths: []string{"testdata/proto"},
		Parameter:   "paths=source_relative",
		Golden:      "testdata/golden",
		Update:      *update,
	})
}

// Generate returns the generated files by name, for tests of their own.
func ExampleGenerate() {
	files, err := gentest.Generate(gentest.Config{
		ImportPaths: []string{"testdata/proto"},
		Parameter:   "paths=source_relative,features=keys",
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, name := range slices.Sorted(maps.Keys(files)) {
		fmt.Println(name)
		for line := range strings.Lines(files[name]) {
			if strings.HasPrefix(line, "func ") {
				fmt.Print("  ", line)
			}
		}
	}
	// Output:
	// shop/v1/shop_edgekit.pb.go
	//   func (m *Order) GetKeyString() string {
	//   func ParseOrderKeyString(s string) (*OrderKey, error) {
}

// Input the plugin refuses comes back as its diagnostics.
func ExampleGenerate_diagnostics() {
	_, err := gentest.Generate(gentest.Config{ImportPaths: []string{"testdata/bad"}})
	fmt.Println(err)
	// Output:
	// protoc-gen-go-edgekit failed:
	// clash/v1/clash.proto:12:3: field key_string clashes with the GetKeyString method of feature "keys"; rename the field or skip the feature with option (edgekit.options.v1.message).skip_features = "keys"
}
