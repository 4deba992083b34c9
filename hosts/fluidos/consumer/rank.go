package consumer

import (
	"cmp"
	"math/big"
	"slices"

	"github.com/edgekit/edgekit/fluidos"
)

// rank orders candidates, best first: the lowest price (an amount that is
// missing or not a decimal number comes last; currencies and periods are
// not converted), then the selector's preference, the least oversized
// flavor (for a K8Slice: the least CPU, then the least memory; for a VM
// the same), then the order they were found in.
func rank(cands []*fluidos.PeeringCandidate) {
	type key struct {
		price    *big.Rat
		cpu, mem int64
	}
	keys := make(map[*fluidos.PeeringCandidate]key, len(cands))
	for _, c := range cands {
		f := c.GetFlavor()
		k := key{}
		if r, ok := new(big.Rat).SetString(f.GetPrice().GetAmount()); ok && f.GetPrice().GetAmount() != "" {
			k.price = r
		}
		switch {
		case f.GetK8Slice() != nil:
			k.cpu, k.mem = f.GetK8Slice().GetCharacteristics().GetCpu(), f.GetK8Slice().GetCharacteristics().GetMemory()
		case f.GetVm() != nil:
			k.cpu, k.mem = f.GetVm().GetCpu(), f.GetVm().GetMemory()
		}
		keys[c] = k
	}
	slices.SortStableFunc(cands, func(a, b *fluidos.PeeringCandidate) int {
		ka, kb := keys[a], keys[b]
		switch {
		case ka.price == nil && kb.price != nil:
			return 1
		case ka.price != nil && kb.price == nil:
			return -1
		case ka.price != nil:
			if c := ka.price.Cmp(kb.price); c != 0 {
				return c
			}
		}
		return cmp.Or(cmp.Compare(ka.cpu, kb.cpu), cmp.Compare(ka.mem, kb.mem))
	})
}
