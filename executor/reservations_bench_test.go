package executor_test

import (
	"context"
	"strconv"
	"testing"

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/executor"
	"github.com/edgekit/edgekit/platforms/fake"
)

// reservationSizes are the numbers of objects already holding reservations
// on the cloudlet in the reservation benchmarks.
var reservationSizes = []int{1000, 10000}

// BenchmarkMemReservationsUpdate measures one update of a cloudlet's
// reservations while n other objects hold reservations there: the owner
// releases everything it holds (Release with every kind), then reserves a
// subnet and two ports again, and reads them back (Values), as a platform
// does when it re-creates an object. The cost per update must not grow
// with n.
func BenchmarkMemReservationsUpdate(b *testing.B) {
	for _, n := range reservationSizes {
		b.Run("objects="+strconv.Itoa(n), func(b *testing.B) {
			r := executor.NewMemReservations()
			ctx := context.Background()
			owner := func(i int) string { return "ClusterInst:name=c" + strconv.Itoa(i) }
			hold := func(set executor.ReservationSet, i int) error {
				if err := set.Reserve(executor.ReserveSubnet, "s"+strconv.Itoa(i), owner(i)); err != nil {
					return err
				}
				for _, p := range []int{2 * i, 2*i + 1} {
					if err := set.Reserve(executor.ReservePort, strconv.Itoa(p), owner(i)); err != nil {
						return err
					}
				}
				return nil
			}
			for i := range n {
				if err := r.Update(ctx, "site", func(set executor.ReservationSet) error { return hold(set, i) }); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				k := i % n
				i++
				err := r.Update(ctx, "site", func(set executor.ReservationSet) error {
					set.Release("", owner(k))
					if err := hold(set, k); err != nil {
						return err
					}
					if got := set.Values(executor.ReservePort, owner(k)); len(got) != 2 {
						b.Fatalf("owner %d holds ports %v, want 2", k, got)
					}
					return nil
				})
				if err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkFakeClusterChurn creates n clusters on the fake platform (each
// reserves a subnet) and deletes them again (each releases its
// reservations), calling the platform directly; it reports the time per
// object. What remains of the growth with n is the fake's search for the
// lowest free subnet, not the reservation store.
func BenchmarkFakeClusterChurn(b *testing.B) {
	for _, n := range reservationSizes {
		b.Run("objects="+strconv.Itoa(n), func(b *testing.B) {
			cl := &edgeproto.Cloudlet{Key: &edgeproto.CloudletKey{Organization: "op", Name: "site"}}
			clusters := make([]*edgeproto.ClusterInst, n)
			for i := range clusters {
				clusters[i] = &edgeproto.ClusterInst{Key: &edgeproto.ClusterKey{Organization: "dev", Name: "c" + strconv.Itoa(i)},
					CloudletKey: cl.Key}
			}
			ctx := context.Background()
			pr := executor.ProgressFunc(func(string) {})
			b.ReportAllocs()
			for b.Loop() {
				p := fake.New(fake.Options{})
				res := executor.NewMemReservations()
				for _, ci := range clusters {
					if err := p.CreateCluster(ctx, cl, ci, res, pr); err != nil {
						b.Fatal(err)
					}
				}
				for _, ci := range clusters {
					if err := p.DeleteCluster(ctx, cl, ci, res, pr); err != nil {
						b.Fatal(err)
					}
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/object")
		})
	}
}
