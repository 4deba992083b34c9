package consumer

import (
	"slices"
	"testing"

	"github.com/edgekit/edgekit/fluidos"
)

func TestRankByPriceThenSize(t *testing.T) {
	t.Parallel()
	cand := func(id, price string, cpu, mem int64) *fluidos.PeeringCandidate {
		return &fluidos.PeeringCandidate{Id: id, Flavor: &fluidos.Flavor{Price: &fluidos.Price{Amount: price},
			Spec: &fluidos.Flavor_K8Slice{K8Slice: &fluidos.K8Slice{Characteristics: &fluidos.K8SliceCharacteristics{Cpu: cpu, Memory: mem}}}}}
	}
	cands := []*fluidos.PeeringCandidate{
		cand("no-price", "", 1, 1),
		cand("dear", "10", 1, 1),
		cand("cheap-big", "1.5", 8000, 1),
		cand("garbled", "cheap", 1, 1),
		cand("cheap-small", "1.50", 2000, 4),
		cand("cheap-small-less-mem", "1.5", 2000, 2),
		cand("first-of-equals", "3", 1000, 1),
		cand("second-of-equals", "3", 1000, 1),
	}
	rank(cands)
	var got []string
	for _, c := range cands {
		got = append(got, c.GetId())
	}
	want := []string{"cheap-small-less-mem", "cheap-small", "cheap-big", "first-of-equals", "second-of-equals", "dear", "no-price", "garbled"}
	if !slices.Equal(got, want) {
		t.Errorf("rank = %v\nwant   %v", got, want)
	}
}
