package fieldmap

import (
	"slices"
	"strconv"
	"strings"
	"testing"
)

// wideShape has more than 64 flags over several levels, flags longer than
// the 7 bytes a key holds ("13.4.1000", "200.536870911"), and enough
// flags that some of them share a first slot of the hash table.
var wideShape = func() *Shape {
	leaf := &Shape{Fields: []ShapeField{{Number: 1, Name: "a"}, {Number: 9, Name: "b"}, {Number: 1000, Name: "c"}}}
	mid := &Shape{}
	for n := int32(1); n <= 30; n++ {
		f := ShapeField{Number: n, Name: "m" + strconv.Itoa(int(n))}
		if n%7 == 4 {
			f.Kind, f.Sub = KindMessage, leaf
		}
		mid.Fields = append(mid.Fields, f)
	}
	top := &Shape{}
	for n := int32(1); n <= 40; n++ {
		f := ShapeField{Number: n, Name: "t" + strconv.Itoa(int(n))}
		if n%10 == 3 {
			f.Kind, f.Sub = KindMessage, mid
		}
		top.Fields = append(top.Fields, f)
	}
	top.Fields = append(top.Fields,
		ShapeField{Number: 200, Name: "sparse", Kind: KindMessage, Sub: lookupShape.Fields[13].Sub},
		ShapeField{Number: 536870911, Name: "last", Kind: KindList, Sub: leaf})
	return top
}()

// hashSchemas returns loaded schemas whose flags are in a hash table.
func hashSchemas(t *testing.T) []*Schema {
	t.Helper()
	var out []*Schema
	for _, sh := range []*Shape{lookupShape, wideShape} {
		s := NewShapeSchema("test.Hash", sh, false)
		s.load()
		if len(s.hash.keys) == 0 {
			t.Fatalf("schema of %d flags has no flag hash", len(s.fields))
		}
		out = append(out, s)
	}
	return out
}

// TestFlagHashFindsEveryFlag checks that the hash table finds every flag
// of the schemas as its own number, short and long flags alike, and that
// some flags were placed past their first slot, so probing is exercised.
func TestFlagHashFindsEveryFlag(t *testing.T) {
	probed, long := 0, 0
	for _, s := range hashSchemas(t) {
		for i, f := range s.fields {
			got, ok := s.findHash(f.Flag)
			if !ok || got != int32(i) {
				t.Errorf("findHash(%q) = %d, %v; want %d, true", f.Flag, got, ok, i)
			}
			key, exact := flagKey(f.Flag)
			if s.hash.keys[(key*hashMul)>>s.hash.shift] != key {
				probed++
			}
			if !exact {
				long++
			}
		}
	}
	if probed == 0 || long == 0 {
		t.Fatalf("%d flags past their first slot, %d longer than 7 bytes: the test schemas no longer exercise probing and long keys", probed, long)
	}
}

// TestFlagHashRefusesNearMisses checks that strings one edit away from a
// flag are not found by the hash (find then agrees with mapFind, through
// the tree walk), including strings that differ from a flag only by bytes
// a packed key could lose: a leading NUL, or a different length.
func TestFlagHashRefusesNearMisses(t *testing.T) {
	for _, s := range hashSchemas(t) {
		var queries []string
		for _, f := range s.fields {
			fl := f.Flag
			queries = append(queries, "", "\x00", "\x00"+fl, fl+"\x00", "0"+fl, fl+"0", fl+".", "."+fl,
				fl+".0", fl+".1", fl+".99", fl[:len(fl)-1], fl[1:], fl+fl, " "+fl, fl[:len(fl)-1]+"x")
		}
		for _, q := range queries {
			wi, wok := mapFind(s, q)
			if gi, gok := s.findHash(q); gok && (!wok || gi != wi) {
				t.Errorf("findHash(%q) = %d, true; want it refused (mapFind: %d, %v)", q, gi, wi, wok)
			}
			if gi, gok := s.find(q); gi != wi || gok != wok {
				t.Errorf("find(%q) = %d, %v; want %d, %v", q, gi, gok, wi, wok)
			}
		}
	}
}

// TestFlagKeysDistinct checks that different short flags never share a
// key: a key holds the bytes and the length of a flag of up to 7 bytes,
// and the keys of longer flags have their top bit set.
func TestFlagKeysDistinct(t *testing.T) {
	seen := map[uint64]string{}
	for _, q := range []string{"1", "01", "\x001", "1\x00", "1.", "1.1", "11", "1.1.1", "1234567", "12345678",
		"\xff\xff\xff\xff\xff\xff\xff", "\x00\x00\x00\x00\x00\x00\x00", "\x00"} {
		k, exact := flagKey(q)
		if exact != (len(q) <= 7) {
			t.Errorf("flagKey(%q) exact = %v", q, exact)
		}
		if exact && k&longKeyBit != 0 || !exact && k&longKeyBit == 0 || k == 0 {
			t.Errorf("flagKey(%q) = %#x: a short key has its top bit clear, a long one set, none is 0", q, k)
		}
		if o, ok := seen[k]; ok {
			t.Errorf("flagKey(%q) = flagKey(%q) = %#x", q, o, k)
		}
		seen[k] = q
	}
}

// FuzzFindWide holds find on the wide schema (hash table, then tree walk)
// to mapFind on any string.
func FuzzFindWide(f *testing.F) {
	s := NewShapeSchema("test.Hash", wideShape, false)
	s.load()
	for _, seed := range []string{"13.4.1000", "200.200.536870911", "536870911.9", "\x0013.4", "33.25.9"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, q string) {
		gi, gok := s.find(q)
		wi, wok := mapFind(s, q)
		if gi != wi || gok != wok {
			t.Fatalf("find(%q) = %d, %v; want %d, %v", q, gi, gok, wi, wok)
		}
	})
}

// TestInitMatchesSet checks that Schema.Init, through each of its paths
// (schemas of one word, two words and more), builds the same bit sets as
// setting the flags one by one, on random subsets of every schema's
// flags, and refuses an unknown flag naming it.
func TestInitMatchesSet(t *testing.T) {
	two := &Shape{}
	for n := int32(1); n <= 40; n++ { // 88 flags
		f := ShapeField{Number: n, Name: "t"}
		if n%5 == 0 {
			f.Kind, f.Sub = KindMessage, lookupShape.Fields[12].Sub // mid: 6 flags
		}
		two.Fields = append(two.Fields, f)
	}
	rnd := uint64(1)
	next := func() uint64 { rnd = rnd*6364136223846793005 + 1442695040888963407; return rnd >> 33 }
	for want, sh := range []*Shape{lookupShape, two, wideShape} {
		s := NewShapeSchema("test.Init", sh, false)
		s.load()
		words := (len(s.fields) + 63) / 64
		if min(words, 3) != want+1 {
			t.Fatalf("schema %d has %d flags, %d words: want %d", want, len(s.fields), words, want+1)
		}
		for round := range 200 {
			var flags []string
			for _, f := range s.fields {
				if next()%4 == 0 {
					flags = append(flags, f.Flag)
				}
			}
			if round%2 == 1 && len(flags) > 0 {
				flags = append(flags, flags[0]) // a repeat counts once
			}
			got, err := s.Init(Of("9"), flags...)
			if err != nil {
				t.Fatalf("%d-word schema: Init: %v", words, err)
			}
			want := s.NewFieldMap()
			want.Set(flags...)
			if !slices.Equal(got.words(), want.words()) || got.n != want.n || got.Count() != want.Count() {
				t.Fatalf("%d-word schema, flags %v: Init made %v (n %d), Set %v (n %d)", words, flags, got.words(), got.n, want.words(), want.n)
			}
		}
		if got, err := s.Init(new(FieldMap), s.fields[0].Flag, "1.2.3.4.5.6.7.8"); got != nil || err == nil || !strings.Contains(err.Error(), `"1.2.3.4.5.6.7.8"`) {
			t.Fatalf("%d-word schema: Init with an unknown flag = %v, %v; want nil and an error naming it", words, got, err)
		}
	}
}
