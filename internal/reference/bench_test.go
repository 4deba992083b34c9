package reference_test

import (
	"testing"

	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/edgekit/edgekit/internal/randmsg"
	"github.com/edgekit/edgekit/internal/reference"
)

// The reflection baseline on dynamic messages; generated code is compared
// against the same operations on its own types.

func BenchmarkDiffFields(b *testing.B) {
	md := desc(b, "reftest.v1.Top")
	r := randmsg.New(7)
	x, y := dynamicpb.NewMessage(md), dynamicpb.NewMessage(md)
	randmsg.Fill(x, r, randmsg.Options{})
	randmsg.Fill(y, r, randmsg.Options{})
	b.ReportAllocs()
	for b.Loop() {
		reference.DiffFields(x, y)
	}
}

func BenchmarkCopyInFields(b *testing.B) {
	md := desc(b, "reftest.v1.Top")
	r := randmsg.New(7)
	src := dynamicpb.NewMessage(md)
	randmsg.Fill(src, r, randmsg.Options{})
	all := reference.NewSchema(md).All()
	b.ReportAllocs()
	for b.Loop() {
		dst := dynamicpb.NewMessage(md)
		reference.CopyInFields(dst, src, all)
	}
}
