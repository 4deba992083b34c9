package fieldmap

import (
	"bytes"

	"google.golang.org/protobuf/encoding/protowire"
)

// EqualUnknown compares the unknown fields of two messages as proto.Equal
// does: equal bytes are equal; otherwise the fields are grouped by field
// number, keeping their order within a number, and the groups must match,
// so fields of different numbers may come in any order. Bytes that do not
// parse as fields are compared as one group after the fields before them
// (where proto.Equal would panic).
func EqualUnknown(a, b []byte) bool {
	if len(a) != len(b) {
		return false
	}
	if bytes.Equal(a, b) {
		return true
	}
	ga, gb := groupUnknown(a), groupUnknown(b)
	if len(ga) != len(gb) {
		return false
	}
	for k, va := range ga {
		if vb, ok := gb[k]; !ok || !bytes.Equal(va, vb) {
			return false
		}
	}
	return true
}

// groupUnknown concatenates the fields of b by field number; unparsable
// trailing bytes go under number 0, which no valid field has.
func groupUnknown(b []byte) map[protowire.Number][]byte {
	out := map[protowire.Number][]byte{}
	for len(b) > 0 {
		num, _, n := protowire.ConsumeField(b)
		if n < 0 {
			out[0] = append(out[0], b...)
			break
		}
		out[num] = append(out[num], b[:n]...)
		b = b[n:]
	}
	return out
}
