package fieldmap

import (
	"bytes"
	"math"
	"slices"
	"testing"
)

func TestAddList(t *testing.T) {
	tests := []struct {
		name      string
		dst, src  []string
		want      []string
		wantCount int
	}{
		{"nil dst nil src", nil, nil, nil, 0},
		{"nil dst", nil, []string{"a", "b"}, []string{"a", "b"}, 1},
		{"empty src", []string{"a"}, []string{}, []string{"a"}, 0},
		{"appends missing in src order", []string{"b"}, []string{"c", "b", "a"}, []string{"b", "c", "a"}, 1},
		{"duplicates in src once", []string{"x"}, []string{"a", "a", "x", "a"}, []string{"x", "a"}, 1},
		{"all present", []string{"a", "b"}, []string{"b", "a"}, []string{"a", "b"}, 0},
		{"keeps duplicates of dst", []string{"a", "a"}, []string{"a"}, []string{"a", "a"}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dst := slices.Clone(tt.dst)
			if got := AddList(&dst, tt.src); got != tt.wantCount {
				t.Errorf("count = %d, want %d", got, tt.wantCount)
			}
			if !slices.Equal(dst, tt.want) {
				t.Errorf("dst = %q, want %q", dst, tt.want)
			}
		})
	}
	if AddList[int](nil, []int{1}) != 0 {
		t.Error("nil destination pointer changed something")
	}
}

func TestAddListFunc(t *testing.T) {
	nan := math.NaN()
	dst := []float64{1, nan}
	if got := AddListFunc(&dst, []float64{nan, 1, 2, 2, math.Copysign(0, -1), 0}, EqualFloat64, nil); got != 1 {
		t.Errorf("count = %d, want 1", got)
	}
	if len(dst) != 4 || dst[2] != 2 || dst[3] != 0 {
		t.Errorf("dst = %v, want [1 NaN 2 -0]", dst)
	}

	// Copies the elements it adds.
	src := [][]byte{[]byte("a"), []byte("b")}
	var bs [][]byte
	if got := AddListFunc(&bs, src, bytes.Equal, CloneBytes); got != 1 {
		t.Errorf("count = %d, want 1", got)
	}
	src[0][0] = 'z'
	if string(bs[0]) != "a" {
		t.Errorf("added element aliases the source: %q", bs[0])
	}
	if got := AddListFunc(&bs, [][]byte{[]byte("b")}, bytes.Equal, CloneBytes); got != 0 {
		t.Errorf("count = %d, want 0", got)
	}
	if AddListFunc[int](nil, []int{1}, func(a, b int) bool { return a == b }, nil) != 0 {
		t.Error("nil destination pointer changed something")
	}
}

func TestRemoveList(t *testing.T) {
	tests := []struct {
		name      string
		dst, src  []int
		want      []int
		wantCount int
	}{
		{"nil dst", nil, []int{1}, nil, 0},
		{"nil src", []int{1}, nil, []int{1}, 0},
		{"none match", []int{1, 2}, []int{3}, []int{1, 2}, 0},
		{"keeps order", []int{1, 2, 3, 2, 4}, []int{2, 9}, []int{1, 3, 4}, 1},
		{"first removed", []int{1, 2}, []int{1}, []int{2}, 1},
		{"all removed is nil", []int{1, 1, 2}, []int{2, 1}, nil, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			orig := slices.Clone(tt.dst)
			dst := tt.dst
			if got := RemoveList(&dst, tt.src); got != tt.wantCount {
				t.Errorf("count = %d, want %d", got, tt.wantCount)
			}
			if !slices.Equal(dst, tt.want) || (tt.want == nil) != (dst == nil) {
				t.Errorf("dst = %#v, want %#v", dst, tt.want)
			}
			if !slices.Equal(tt.dst, orig) {
				t.Errorf("backing array of the destination modified: %v, was %v", tt.dst, orig)
			}
		})
	}
	nan := math.NaN()
	fs := []float64{nan, 1}
	if got := RemoveListFunc(&fs, []float64{nan}, EqualFloat64); got != 1 || len(fs) != 1 || fs[0] != 1 {
		t.Errorf("RemoveListFunc NaN: count %d, dst %v", got, fs)
	}
	if RemoveList[int](nil, []int{1}) != 0 {
		t.Error("nil destination pointer changed something")
	}
}

func TestAddMap(t *testing.T) {
	var dst map[string]int
	if got := AddMap(&dst, nil); got != 0 || dst != nil {
		t.Errorf("empty src: count %d, dst %v", got, dst)
	}
	if got := AddMap(&dst, map[string]int{"a": 1}); got != 1 || dst["a"] != 1 {
		t.Errorf("nil dst: count %d, dst %v", got, dst)
	}
	if got := AddMap(&dst, map[string]int{"a": 1}); got != 0 {
		t.Errorf("same entry: count %d", got)
	}
	if got := AddMap(&dst, map[string]int{"a": 2, "b": 3}); got != 1 || len(dst) != 2 || dst["a"] != 2 {
		t.Errorf("replace value: count %d, dst %v", got, dst)
	}
	if AddMap[string, int](nil, map[string]int{"a": 1}) != 0 {
		t.Error("nil destination pointer changed something")
	}

	src := map[string][]byte{"k": []byte("v")}
	var bm map[string][]byte
	if got := AddMapFunc(&bm, src, bytes.Equal, CloneBytes); got != 1 {
		t.Errorf("count %d, want 1", got)
	}
	src["k"][0] = 'z'
	if string(bm["k"]) != "v" {
		t.Errorf("added value aliases the source: %q", bm["k"])
	}
	if got := AddMapFunc(&bm, map[string][]byte{"k": []byte("v")}, bytes.Equal, CloneBytes); got != 0 {
		t.Errorf("equal value: count %d, want 0", got)
	}
	nan := math.NaN()
	fm := map[int]float64{1: nan}
	if got := AddMapFunc(&fm, map[int]float64{1: nan}, EqualFloat64, nil); got != 0 {
		t.Errorf("NaN over NaN: count %d, want 0", got)
	}
}

func TestRemoveMap(t *testing.T) {
	var nilMap map[string]int
	if got := RemoveMap(&nilMap, map[string]int{"a": 1}); got != 0 || nilMap != nil {
		t.Errorf("nil dst: count %d", got)
	}
	dst := map[string]int{"a": 1, "b": 2}
	if got := RemoveMap(&dst, map[string]int{"x": 1}); got != 0 || len(dst) != 2 {
		t.Errorf("no key: count %d, dst %v", got, dst)
	}
	if got := RemoveMap(&dst, map[string]int{"a": 99}); got != 1 || len(dst) != 1 || dst["b"] != 2 {
		t.Errorf("remove by key whatever the value: count %d, dst %v", got, dst)
	}
	if got := RemoveMap(&dst, map[string]int{"b": 0}); got != 1 || dst != nil {
		t.Errorf("empty result must be nil: count %d, dst %#v", got, dst)
	}
	if RemoveMap[string, int](nil, map[string]int{"a": 1}) != 0 {
		t.Error("nil destination pointer changed something")
	}
}
