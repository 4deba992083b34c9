package fieldmap

import (
	"bytes"
	"math"
	"slices"
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/timestamppb"
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

func TestCopyMessageListNilElements(t *testing.T) {
	empty, one := &timestamppb.Timestamp{}, &timestamppb.Timestamp{Seconds: 1}
	tests := []struct {
		name     string
		dst, src []*timestamppb.Timestamp
		want     int
	}{
		{"nil element equals an empty message", []*timestamppb.Timestamp{nil, one}, []*timestamppb.Timestamp{empty, one}, 0},
		{"empty message equals a nil element", []*timestamppb.Timestamp{empty}, []*timestamppb.Timestamp{nil}, 0},
		{"both nil", []*timestamppb.Timestamp{nil}, []*timestamppb.Timestamp{nil}, 0},
		{"nil element differs from a set message", []*timestamppb.Timestamp{nil}, []*timestamppb.Timestamp{one}, 1},
		{"set message differs from a nil element", []*timestamppb.Timestamp{one}, []*timestamppb.Timestamp{nil}, 1},
		{"lengths differ", []*timestamppb.Timestamp{one}, []*timestamppb.Timestamp{one, one}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dst := slices.Clone(tt.dst)
			if got := CopyMessageList(Replace, &dst, tt.src); got != tt.want {
				t.Fatalf("count = %d, want %d", got, tt.want)
			}
			if tt.want == 0 {
				if !slices.Equal(dst, tt.dst) {
					t.Errorf("unchanged list was replaced: %v", dst)
				}
				return
			}
			if len(dst) != len(tt.src) {
				t.Fatalf("dst has %d elements, want %d", len(dst), len(tt.src))
			}
			for i := range dst {
				if tt.src[i] != nil && (dst[i] == tt.src[i] || !proto.Equal(dst[i], tt.src[i])) {
					t.Errorf("dst[%d] = %v (same pointer %v), want a copy of %v", i, dst[i], dst[i] == tt.src[i], tt.src[i])
				}
			}
		})
	}
	// Add and Remove compare elements with Equal, nil unequal to empty.
	dst := []*timestamppb.Timestamp{nil}
	if got := CopyMessageList(Add, &dst, []*timestamppb.Timestamp{empty}); got != 1 || len(dst) != 2 || dst[1] == empty {
		t.Errorf("Add: count %d, dst %v; want 1 and a copy of the empty message appended", got, dst)
	}
	if got := CopyMessageList(Remove, &dst, []*timestamppb.Timestamp{{}}); got != 1 || len(dst) != 1 || dst[0] != nil {
		t.Errorf("Remove: count %d, dst %v; want 1 and [nil]", got, dst)
	}
}

func TestCopyMessageMapNilValues(t *testing.T) {
	empty, one := &durationpb.Duration{}, &durationpb.Duration{Nanos: 1}
	dst := map[string]*durationpb.Duration{"a": nil, "b": one}
	if got := CopyMessageMap(Replace, &dst, map[string]*durationpb.Duration{"a": empty, "b": {Nanos: 1}}); got != 0 {
		t.Errorf("nil value against an empty message: count %d, want 0", got)
	}
	if got := CopyMessageMap(Replace, &dst, map[string]*durationpb.Duration{"a": one, "b": one}); got != 1 ||
		dst["a"] == one || !proto.Equal(dst["a"], one) {
		t.Errorf("nil value against a set message: count %d, dst %v; want 1 and a copy", got, dst)
	}
	if got := CopyMessageMap(Replace, &dst, nil); got != 1 || dst != nil {
		t.Errorf("to an empty map: count %d, dst %v; want 1 and nil", got, dst)
	}
	if got := CopyMessageMap(Add, &dst, map[string]*durationpb.Duration{"c": one}); got != 1 || dst["c"] == one || !proto.Equal(dst["c"], one) {
		t.Errorf("Add: count %d, dst %v; want 1 and a copy", got, dst)
	}
	if got := CopyMessageMap(Remove, &dst, map[string]*durationpb.Duration{"c": nil}); got != 1 || dst != nil {
		t.Errorf("Remove: count %d, dst %v; want 1 and nil", got, dst)
	}
}

func TestCopyMessage(t *testing.T) {
	one := &timestamppb.Timestamp{Seconds: 1}
	var d *timestamppb.Timestamp
	if got := CopyMessage(&d, nil, EqualTimestamp, CloneTimestamp); got != 0 || d != nil {
		t.Errorf("nil to nil: count %d, dst %v; want 0 and nil", got, d)
	}
	if got := CopyMessage(&d, &timestamppb.Timestamp{}, EqualTimestamp, CloneTimestamp); got != 1 || d == nil {
		t.Errorf("an empty message into nil (presence): count %d, dst %v; want 1 and an empty message", got, d)
	}
	if got := CopyMessage(&d, one, EqualTimestamp, CloneTimestamp); got != 1 || d == one || !proto.Equal(d, one) {
		t.Errorf("a set message: count %d, dst %v; want 1 and a copy", got, d)
	}
	if got := CopyMessage(&d, &timestamppb.Timestamp{Seconds: 1}, EqualTimestamp, CloneTimestamp); got != 0 {
		t.Errorf("an equal message: count %d, want 0", got)
	}
	if got := CopyMessage(&d, nil, EqualTimestamp, CloneTimestamp); got != 1 || d != nil {
		t.Errorf("nil over a set message: count %d, dst %v; want 1 and nil", got, d)
	}
}
