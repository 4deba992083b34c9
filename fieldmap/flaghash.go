package fieldmap

import (
	"encoding/binary"
	"unsafe"
)

// Flag hash: every flag of a schema (one whose flags are all canonical)
// is also kept in an open-addressing hash table built with the flag tree,
// so that finding a flag the schema has costs one pass over its bytes, a
// multiply and, most often, one table slot, instead of a walk down the
// tree that parses and indexes one field number at a time. A flag of at
// most 7 bytes is its own key (its bytes and length packed in a uint64),
// so a key that matches is the flag and no string is compared; a longer
// flag's key is a hash of its bytes, confirmed by comparing the strings.
// Anything the table does not hold (flags the schema lacks, the nearest
// ancestor of a flag below a leaf) is left to the tree walk.

// flagHash is the hash table of the flags of a schema.
type flagHash struct {
	keys  []uint64 // 0: empty slot
	ids   []int32  // flag number of keys[k]
	shift uint8    // 64 - log2(len(keys))
}

// hashMul spreads a key's bits over the top bits used as the slot.
const hashMul = 0x9e3779b97f4a7c15

// longKeyBit marks the keys of flags longer than 7 bytes: short keys
// hold their length in the top byte (1 to 7), so the two never meet.
const longKeyBit = 1 << 63

// flagKey returns the key of a flag of at least one byte and whether it
// is exact (the flag is at most 7 bytes, so equal keys mean equal flags).
func flagKey(flag string) (key uint64, exact bool) {
	if _, key, ok := new(flagHash).shortFind(flag); ok { // an empty table: the key alone
		return key, true
	}
	key = 0xcbf29ce484222325 // FNV-1a
	for i := 0; i < len(flag); i++ {
		key = (key ^ uint64(flag[i])) * 0x100000001b3
	}
	return key | longKeyBit, false
}

// probe returns the flag number stored under key, or -1. Every probe
// sequence ends, at the latest, at an empty slot (buildHash leaves at least
// half of them empty).
func (h *flagHash) probe(key uint64) int32 {
	mask := uint64(len(h.keys) - 1)
	for k := (key * hashMul) >> h.shift; ; k = (k + 1) & mask {
		switch h.keys[k] {
		case key:
			return h.ids[k]
		case 0:
			return -1
		}
	}
}

// buildHash fills the hash table of s.fields: at least twice as many slots
// as flags, so that every probe sequence ends at an empty slot.
func (s *Schema) buildHash() {
	n := len(s.fields)
	if n == 0 {
		return
	}
	bits := uint8(3)
	for 1<<bits < 2*n {
		bits++
	}
	h := &s.hash
	h.keys, h.ids, h.shift = make([]uint64, 1<<bits), make([]int32, 1<<bits), 64-bits
	mask := uint64(1)<<bits - 1
	for i, f := range s.fields {
		key, _ := flagKey(f.Flag)
		k := (key * hashMul) >> h.shift
		for h.keys[k] != 0 {
			k = (k + 1) & mask
		}
		h.keys[k], h.ids[k] = key, int32(i)
	}
}

// shortFind returns the key of a flag of 1 to 7 bytes (its bytes, little
// endian, and its length in the top byte, read with two loads of up to 4
// bytes whose overlapping bytes land on the same bits) and the number of
// the flag when the table holds it, else -1. short is false, and the flag
// left to the caller, for other lengths. It is the lookup of Schema.Init,
// one call per flag.
func (h *flagHash) shortFind(flag string) (id int32, key uint64, short bool) {
	n := uint(len(flag))
	if n-1 > 6 { // 0 wraps
		return -1, 0, false
	}
	p := unsafe.Pointer(unsafe.StringData(flag))
	if n >= 4 {
		lo, hi := (*[4]byte)(p), (*[4]byte)(unsafe.Add(p, n-4))
		key = uint64(binary.LittleEndian.Uint32(lo[:])) | uint64(binary.LittleEndian.Uint32(hi[:]))<<(8*(n-4))
	} else {
		key = uint64(*(*byte)(p)) | uint64(*(*byte)(unsafe.Add(p, n/2)))<<(8*(n/2)) | uint64(*(*byte)(unsafe.Add(p, n-1)))<<(8*(n-1))
	}
	key |= uint64(n) << 56
	if len(h.keys) == 0 {
		return -1, key, true
	}
	return h.probe(key), key, true
}

// findHash returns the number of flag when the schema has it. The flags it
// does not find are left to the tree walk.
func (s *Schema) findHash(flag string) (int32, bool) {
	h := &s.hash
	if i, _, short := h.shortFind(flag); short {
		return i, i >= 0
	}
	if len(h.keys) == 0 {
		return -1, false
	}
	key, _ := flagKey(flag)
	mask := uint64(len(h.keys) - 1)
	for k := (key * hashMul) >> h.shift; ; k = (k + 1) & mask {
		switch h.keys[k] {
		case key:
			if id := h.ids[k]; s.fields[id].Flag == flag {
				return id, true
			}
		case 0:
			return -1, false
		}
	}
}
