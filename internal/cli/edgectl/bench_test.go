package edgectl_test

import (
	"io"
	"testing"

	"github.com/edgekit/edgekit/internal/cli/edgectl"
)

// BenchmarkNewRootCommand measures what every edgectl run pays before it
// parses its command line: the kinds from the descriptors and the flags of
// every kind and verb.
func BenchmarkNewRootCommand(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		edgectl.NewRootCommand(edgectl.Options{Out: io.Discard, ErrOut: io.Discard})
	}
}
