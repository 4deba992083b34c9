package vtbench_test

import (
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/fieldmap"
	"github.com/edgekit/edgekit/fluidos"
	"github.com/edgekit/edgekit/internal/testpb"
)

// BenchmarkDiffFields runs the table-driven DiffFields on two equal,
// separately built copies of each subject, so that every field is compared
// (lists of messages, oneof members, timestamps through their shape
// Values), and the result is empty.
func BenchmarkDiffFields(b *testing.B) {
	for _, s := range subjects() {
		other := proto.Clone(s.ours)
		var diff func() *fieldmap.FieldMap
		switch m := s.ours.(type) {
		case *edgeproto.CloudletInfo:
			diff = func() *fieldmap.FieldMap { return m.DiffFields(other.(*edgeproto.CloudletInfo)) }
		case *fluidos.Flavor:
			diff = func() *fieldmap.FieldMap { return m.DiffFields(other.(*fluidos.Flavor)) }
		case *testpb.Top:
			diff = func() *fieldmap.FieldMap { return m.DiffFields(other.(*testpb.Top)) }
		default:
			b.Fatalf("%s: no DiffFields case", s.name)
		}
		if n := diff().Count(); n != 0 {
			b.Fatalf("%s: equal copies differ in %d flags", s.name, n)
		}
		b.Run("msg="+s.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				sinkFM = diff()
			}
		})
	}
}

var sinkFM *fieldmap.FieldMap
