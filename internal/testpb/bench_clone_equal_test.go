package testpb_test

import (
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/edgekit/edgekit/internal/testpb"
)

// sink keeps benchmark results alive.
var (
	sinkTop  *testpb.Top
	sinkMsg  proto.Message
	sinkBool bool
)

// BenchmarkClone compares the generated Clone with proto.Clone on a fully
// populated Top.
func BenchmarkClone(b *testing.B) {
	m := fullTop()
	b.Run("impl=generated", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			sinkTop = m.Clone()
		}
	})
	b.Run("impl=proto.Clone", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			sinkMsg = proto.Clone(m)
		}
	})
}

// BenchmarkEqual compares the generated Equal with proto.Equal on two equal,
// separately built, fully populated Tops (the worst case: every field is
// visited).
func BenchmarkEqual(b *testing.B) {
	x, y := fullTop(), fullTop()
	if !x.Equal(y) {
		b.Fatal("fullTop values differ")
	}
	b.Run("impl=generated", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			sinkBool = x.Equal(y)
		}
	})
	b.Run("impl=proto.Equal", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			sinkBool = proto.Equal(x, y)
		}
	})
}
