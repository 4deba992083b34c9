package reference_test

import (
	"testing"

	"github.com/edgekit/edgekit/internal/randmsg"
)

// FuzzCopyInDiff drives the CopyInFields/DiffFields invariants from fuzz
// input: the bytes seed the choice of message type, both messages, the
// mutation and the random field map.
func FuzzCopyInDiff(f *testing.F) {
	mds := messages(f)
	f.Add([]byte{})
	f.Add([]byte("reftest"))
	f.Fuzz(func(t *testing.T, data []byte) {
		r := randmsg.FromBytes(data)
		checkCopyDiff(t, mds[r.IntN(len(mds))], r)
	})
}
