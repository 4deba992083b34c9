package fieldmap

import (
	"strings"
	"testing"
)

// lookupShape has dense field numbers (found by direct index), sparse ones
// (binary search), the largest field number, and nesting three deep.
var lookupShape = func() *Shape {
	leaf := &Shape{Fields: []ShapeField{{Number: 1, Name: "a"}, {Number: 2, Name: "b"}, {Number: 7, Name: "c"}}}
	mid := &Shape{Fields: []ShapeField{
		{Number: 3, Name: "x"},
		{Number: 4, Name: "deep", Kind: KindMessage, Sub: leaf},
		{Number: 1000, Name: "far"},
	}}
	sparse := &Shape{Fields: []ShapeField{{Number: 5, Name: "p"}, {Number: 90000, Name: "q"}, {Number: maxFieldNumber, Name: "r"}}}
	top := &Shape{}
	for n := int32(1); n <= 12; n++ {
		top.Fields = append(top.Fields, ShapeField{Number: n, Name: "f"})
	}
	top.Fields = append(top.Fields,
		ShapeField{Number: 13, Name: "mid", Kind: KindMessage, Sub: mid},
		ShapeField{Number: 200, Name: "sparse", Kind: KindMessage, Sub: sparse},
		ShapeField{Number: 201, Name: "list", Kind: KindList, Sub: leaf})
	return top
}()

// lookupSchema returns a loaded schema of lookupShape.
func lookupSchema() *Schema {
	s := NewShapeSchema("test.Lookup", lookupShape, false)
	s.load()
	return s
}

// mapFind is find by a map of the flags and of their string prefixes: the
// definition the flag tree must agree with.
func mapFind(s *Schema, flag string) (int32, bool) {
	byFlag := map[string]int32{}
	for i, f := range s.Fields() {
		byFlag[f.Flag] = int32(i)
	}
	if i, ok := byFlag[flag]; ok {
		return i, true
	}
	for i := len(flag) - 1; i > 0; i-- {
		if flag[i] == '.' {
			if j, ok := byFlag[flag[:i]]; ok {
				return j, false
			}
		}
	}
	return -1, false
}

// TestFindAgreesWithMap checks the flag tree against mapFind on every flag
// of the schema and on strings that are not flags of it: unknown numbers,
// leading zeros, empty components, signs, overflowing numbers, trailing
// dots, and flags below leaves.
func TestFindAgreesWithMap(t *testing.T) {
	s := lookupSchema()
	queries := []string{"", ".", "0", "00", "01", "1.", ".1", "1..2", "+1", "-1", " 1", "1 ", "1a", "x",
		"14", "13.5", "13.4.3", "13.4.7.1", "13.04", "13.4.", "13.1000.2", "200.90000", "200.90001",
		"200.536870911", "200.536870912", "200.5368709110", "200.99999999999999999999", "4294967297",
		"201.1", "201.7", "201.7.1", "13.4.2a", "13.x.1", "12.1"}
	for _, f := range s.Fields() {
		queries = append(queries, f.Flag, f.Flag+".1", f.Flag+".", f.Flag+"0", "0"+f.Flag)
	}
	for _, q := range queries {
		gi, gok := s.find(q)
		wi, wok := mapFind(s, q)
		if gi != wi || gok != wok {
			t.Errorf("find(%q) = %d, %v; want %d, %v", q, gi, gok, wi, wok)
		}
	}
}

// FuzzFind holds the flag tree to mapFind on any string.
func FuzzFind(f *testing.F) {
	s := lookupSchema()
	for _, seed := range []string{"13.4.7", "200.536870911", "1.", "13.04", "201.1.1"} {
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

// TestNonCanonicalSchemaUsesMap checks that NewSchema with flags that are
// not canonical field numbers still finds every flag, exactly.
func TestNonCanonicalSchemaUsesMap(t *testing.T) {
	s := NewSchema("test.Odd", []Field{
		{Flag: "1", Path: "a", Leaf: true},
		{Flag: "x", Path: "b", Kind: KindMessage},
		{Flag: "x.01", Path: "b.c", Leaf: true},
	})
	for i, f := range s.Fields() {
		if got, ok := s.find(f.Flag); !ok || got != int32(i) {
			t.Errorf("find(%q) = %d, %v; want %d, true", f.Flag, got, ok, i)
		}
	}
	if got, ok := s.find("x.1"); ok || got != 1 {
		t.Errorf(`find("x.1") = %d, %v; want the ancestor 1, false`, got, ok)
	}
}

// TestInitResetsAndValidates checks Schema.Init on a map that held other
// flags, and its error.
func TestInitResetsAndValidates(t *testing.T) {
	s := NewShapeSchema("test.Lookup", lookupShape, false)
	fm := Of("7", "99.1")
	got, err := s.Init(fm, "13.4.7", "1")
	if err != nil || got != fm {
		t.Fatalf("Init = %p, %v; want the map itself", got, err)
	}
	if want := "[1 13.4.7]"; fm.String() != want {
		t.Fatalf("Init left %v, want %s", fm, want)
	}
	if !fm.Has("13.4.7") || fm.Has("13.4") || !fm.HasOrHasChild("13") {
		t.Fatalf("Init did not mark ancestors and descendants: %v", fm)
	}
	if got, err := s.Init(fm, "1", "13.5"); got != nil || err == nil || !strings.Contains(err.Error(), `"13.5"`) {
		t.Fatalf("Init with an unknown flag = %v, %v; want nil and an error naming it", got, err)
	}
}

// TestWindow checks Window against HasAt and HasChildAt at every offset of
// a schema over several words.
func TestWindow(t *testing.T) {
	sh := &Shape{}
	for n := int32(1); n <= 70; n++ {
		sub := &Shape{Fields: []ShapeField{{Number: 1, Name: "a"}, {Number: 2, Name: "b"}}}
		sh.Fields = append(sh.Fields, ShapeField{Number: n, Name: "m", Kind: KindMessage, Sub: sub})
	}
	s := NewShapeSchema("test.Wide", sh, false)
	s.load()
	if s.words <= inlineWords {
		t.Fatalf("schema of %d flags fits inline: the test needs one that does not", s.Len())
	}
	fm, err := s.New("3.2", "40", "41.1", "70.2", "22")
	if err != nil {
		t.Fatal(err)
	}
	for at := range s.Len() {
		w := fm.Window(at)
		for k := range 64 {
			i := at + k
			var cover, below bool
			if i < s.Len() {
				cover, below = fm.HasAt(i), fm.HasChildAt(i)
			}
			if (w.Cover>>k&1 == 1) != cover || (w.Below>>k&1 == 1) != below {
				t.Fatalf("Window(%d) bit %d: cover %v below %v, want %v %v", at, k, w.Cover>>k&1, w.Below>>k&1, cover, below)
			}
		}
		if at+10 < s.Len() {
			if sw := w.Shift(10); sw != (Window{w.Cover >> 10, w.Below >> 10}) {
				t.Fatalf("Shift(10) = %v", sw)
			}
		}
	}
}

// TestFirstWindow checks FirstWindow against Window(0) for schemas of one
// word, two words (both inline) and more (held apart), empty and not.
func TestFirstWindow(t *testing.T) {
	for _, n := range []int32{3, 40, 70, 150} {
		sh := &Shape{}
		for i := int32(1); i <= n; i++ {
			sub := &Shape{Fields: []ShapeField{{Number: 1, Name: "a"}}}
			sh.Fields = append(sh.Fields, ShapeField{Number: i, Name: "m", Kind: KindMessage, Sub: sub})
		}
		s := NewShapeSchema("test.Wide", sh, false)
		empty := s.NewFieldMap()
		if got, want := empty.FirstWindow(), empty.Window(0); got != want {
			t.Fatalf("%d flags, empty map: FirstWindow() = %v, Window(0) = %v", s.Len(), got, want)
		}
		flags := []string{"1.1", "2", "3.1"}
		if n >= 40 {
			flags = append(flags, "17.1", "32", "40.1")
		}
		if n >= 70 {
			flags = append(flags, "70.1")
		}
		fm, err := s.New(flags...)
		if err != nil {
			t.Fatal(err)
		}
		w := fm.FirstWindow()
		if want := fm.Window(0); w != want || w.Cover == 0 || w.Below == 0 {
			t.Fatalf("%d flags (%d words): FirstWindow() = %v, Window(0) = %v, want equal and not empty", s.Len(), s.words, w, want)
		}
	}
}
