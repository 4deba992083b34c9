package randmsg

import (
	"crypto/sha256"
	"encoding/binary"
	"math/rand/v2"
)

// New returns a deterministic rand seeded with seed.
func New(seed uint64) *rand.Rand {
	return rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
}

// FromBytes returns a deterministic rand seeded from arbitrary bytes, such as
// a fuzz input: equal inputs give equal sequences, and every byte matters.
func FromBytes(b []byte) *rand.Rand {
	sum := sha256.Sum256(b)
	return rand.New(rand.NewPCG(binary.LittleEndian.Uint64(sum[:8]), binary.LittleEndian.Uint64(sum[8:16])))
}
