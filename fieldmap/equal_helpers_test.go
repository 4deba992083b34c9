package fieldmap

import (
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
)

func TestEqualUnknown(t *testing.T) {
	field := func(num protowire.Number, v uint64) []byte {
		b := protowire.AppendTag(nil, num, protowire.VarintType)
		return protowire.AppendVarint(b, v)
	}
	cat := func(bs ...[]byte) []byte {
		var out []byte
		for _, b := range bs {
			out = append(out, b...)
		}
		return out
	}
	f1a, f1b, f2 := field(1, 5), field(1, 6), field(2, 7)
	tests := []struct {
		name string
		a, b []byte
		want bool
	}{
		{"both nil", nil, nil, true},
		{"nil and empty", nil, []byte{}, true},
		{"same bytes", cat(f1a, f2), cat(f1a, f2), true},
		{"other numbers reordered", cat(f1a, f2), cat(f2, f1a), true},
		{"same number reordered", cat(f1a, f1b), cat(f1b, f1a), false},
		{"different value", cat(f1a, f2), cat(f1b, f2), false},
		{"different length", f1a, cat(f1a, f2), false},
		{"one side missing", f1a, nil, false},
		{"malformed same", []byte{0xff, 0xff}, []byte{0xff, 0xff}, true},
		{"malformed different", []byte{0xff, 0xff}, []byte{0xff, 0xfe}, false},
		{"malformed after field", cat(f2, []byte{0x80}), cat(f1a, []byte{0x80}), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := EqualUnknown(tt.a, tt.b); got != tt.want {
				t.Errorf("EqualUnknown(%x, %x) = %v, want %v", tt.a, tt.b, got, tt.want)
			}
			if got := EqualUnknown(tt.b, tt.a); got != tt.want {
				t.Errorf("EqualUnknown(%x, %x) = %v, want %v (swapped)", tt.b, tt.a, got, tt.want)
			}
		})
	}
}
