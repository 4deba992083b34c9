package gen

import (
	"slices"
	"strings"
	"sync"

	"google.golang.org/protobuf/compiler/protogen"
)

// Feature emits one kind of generated code for a file.
type Feature interface {
	// GenerateFile emits the feature's code for every message of file that
	// the feature applies to, and reports whether it emitted anything.
	GenerateFile(file *protogen.File) bool
}

// Factory builds a feature that writes into g.
type Factory func(g *GeneratedFile) Feature

type registration struct {
	name    string
	factory Factory
}

var (
	registryMu sync.Mutex
	registry   []registration
)

// Register makes a feature available under name. Register panics on a duplicate name, since that is a
// programming error in the plugin binary, not bad input.
func Register(name string, f Factory) {
	registryMu.Lock()
	defer registryMu.Unlock()
	for _, r := range registry {
		if r.name == name {
			panic("gen: feature registered twice: " + name)
		}
	}
	registry = append(registry, registration{name, f})
}

// runOrder fixes the order in which the built-in features emit code, since
// Go initialises feature packages in import-path order. Features not listed
// run after these, by name.
var runOrder = []string{"fields", "clone", "equal", "copyin", "diff", "validate", "redact", "keys"}

// Features returns the names of the registered features, in run order.
func Features() []string {
	registryMu.Lock()
	defer registryMu.Unlock()
	names := make([]string, len(registry))
	for i, r := range registry {
		names[i] = r.name
	}
	rank := func(n string) int {
		if i := slices.Index(runOrder, n); i >= 0 {
			return i
		}
		return len(runOrder)
	}
	slices.SortFunc(names, func(a, b string) int {
		if c := rank(a) - rank(b); c != 0 {
			return c
		}
		return strings.Compare(a, b)
	})
	return names
}

func knownFeature(name string) bool { return slices.Contains(Features(), name) }

func factoryOf(name string) Factory {
	registryMu.Lock()
	defer registryMu.Unlock()
	for _, r := range registry {
		if r.name == name {
			return r.factory
		}
	}
	return nil
}
