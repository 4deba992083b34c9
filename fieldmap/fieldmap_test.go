package fieldmap_test

import (
	"errors"
	"slices"
	"testing"

	"github.com/edgekit/edgekit/fieldmap"
)

// testSchema models CloudletInfo-like flags: 2 key (message), 2.1, 2.2,
// 3 list of messages with 3.1 under it, 4 map, 11 status with 11.3 and a
// depth-3 flag 11.4.1.
var testSchema = fieldmap.NewSchema("test.Info", []fieldmap.Field{
	{Flag: "2", Path: "key", Kind: fieldmap.KindMessage},
	{Flag: "2.1", Path: "key.organization", Leaf: true},
	{Flag: "2.2", Path: "key.name", Leaf: true},
	{Flag: "3", Path: "items", Kind: fieldmap.KindList, Leaf: true, ListActions: true},
	{Flag: "3.1", Path: "items.name"},
	{Flag: "4", Path: "labels", Kind: fieldmap.KindMap, Leaf: true},
	{Flag: "11", Path: "status", Kind: fieldmap.KindMessage},
	{Flag: "11.3", Path: "status.task_name", Leaf: true},
	{Flag: "11.4", Path: "status.detail", Kind: fieldmap.KindMessage},
	{Flag: "11.4.1", Path: "status.detail.msg", Leaf: true},
})

func TestHasSemantics(t *testing.T) {
	tests := []struct {
		name     string
		set      []string
		flag     string
		has      bool
		hasChild bool
	}{
		{"exact", []string{"11.3"}, "11.3", true, true},
		{"ancestor set", []string{"11"}, "11.4.1", true, true},
		{"parent set, deep query", []string{"11.4"}, "11.4.1", true, true},
		{"child set only", []string{"11.4.1"}, "11", false, true},
		{"grandchild set", []string{"11.4.1"}, "11.4", false, true},
		{"sibling set", []string{"11.3"}, "11.4", false, false},
		{"prefix is not an ancestor", []string{"1"}, "11", false, false},
		{"number prefix of a child", []string{"11.30"}, "11.3", false, false},
		{"query prefix of a set flag", []string{"11.3"}, "1", false, false},
		{"empty map", nil, "2", false, false},
		{"unrelated", []string{"2.1"}, "3", false, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fm := fieldmap.Of(tc.set...)
			if got := fm.Has(tc.flag); got != tc.has {
				t.Errorf("Has(%q) on %v = %v, want %v", tc.flag, tc.set, got, tc.has)
			}
			if got := fm.HasOrHasChild(tc.flag); got != tc.hasChild {
				t.Errorf("HasOrHasChild(%q) on %v = %v, want %v", tc.flag, tc.set, got, tc.hasChild)
			}
		})
	}
}

func TestNilMapIsEmpty(t *testing.T) {
	var fm *fieldmap.FieldMap
	if fm.Has("1") || fm.HasOrHasChild("1") || fm.HasChild("1") || fm.Count() != 0 || fm.Fields() != nil {
		t.Fatal("nil FieldMap must behave as empty")
	}
	fm.Clear("1") // must not panic
	if fm.ListAction("1") != fieldmap.Replace {
		t.Fatal("nil FieldMap list action must be Replace")
	}
}

func TestSetClearCount(t *testing.T) {
	fm := testSchema.NewFieldMap()
	fm.Set("11.4.1", "11.3", "11.4.1")
	if fm.Count() != 2 {
		t.Fatalf("Count = %d, want 2 (duplicates count once)", fm.Count())
	}
	if !fm.HasOrHasChild("11") || !fm.HasChild("11.4") {
		t.Fatal("descendants not tracked")
	}
	fm.Clear("11.4.1")
	if fm.HasOrHasChild("11.4") {
		t.Fatal("11.4 still has a child after Clear")
	}
	if !fm.HasOrHasChild("11") {
		t.Fatal("11.3 is still set under 11")
	}
	fm.Clear("11.3", "99")
	if fm.HasOrHasChild("11") || fm.Count() != 0 {
		t.Fatalf("map not empty after clearing everything: %v", fm)
	}
	// Clearing a parent leaves children alone.
	fm.Set("11", "11.3")
	fm.Clear("11")
	if !fm.Has("11.3") || fm.Has("11.4") {
		t.Fatalf("Clear(parent) must keep the child flag: %v", fm)
	}
}

func TestFieldsSortedNumerically(t *testing.T) {
	fm := fieldmap.Of("11", "2.2", "3", "2", "11.4.1", "2.10", "11.3")
	want := []string{"2", "2.2", "2.10", "3", "11", "11.3", "11.4.1"}
	if got := fm.Fields(); !slices.Equal(got, want) {
		t.Fatalf("Fields() = %v, want %v", got, want)
	}
}

func TestCompareFlags(t *testing.T) {
	ordered := []string{"1", "1.1", "1.2", "1.10", "2", "10", "10.1.1", "10.2"}
	for i := range ordered {
		for j := range ordered {
			want := 0
			if i < j {
				want = -1
			} else if i > j {
				want = 1
			}
			if got := fieldmap.CompareFlags(ordered[i], ordered[j]); got != want {
				t.Errorf("CompareFlags(%q, %q) = %d, want %d", ordered[i], ordered[j], got, want)
			}
		}
	}
}

func TestSchemaNewRejectsUnknown(t *testing.T) {
	if _, err := testSchema.New("2.1", "11.3"); err != nil {
		t.Fatalf("valid flags rejected: %v", err)
	}
	_, err := testSchema.New("2.1", "11.9", "12")
	var ue *fieldmap.UnknownFieldError
	if !errors.As(err, &ue) || ue.Flag != "11.9" || ue.Message != "test.Info" {
		t.Fatalf("err = %v, want UnknownFieldError naming 11.9", err)
	}
	if !errors.Is(err, fieldmap.ErrUnknownField) {
		t.Fatal("error does not match ErrUnknownField")
	}
	if got, want := err.Error(), `test.Info: unknown field flag "11.9"`; got != want {
		t.Fatalf("message %q, want %q", got, want)
	}
}

func TestSchemaParse(t *testing.T) {
	fm, err := testSchema.Parse("key.name", "11.3", "items:add")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := fm.Fields(), []string{"2.2", "3", "11.3"}; !slices.Equal(got, want) {
		t.Fatalf("Fields = %v, want %v", got, want)
	}
	if fm.ListAction("3") != fieldmap.Add {
		t.Fatal("items:add lost its action")
	}
	if fm.String() != "[2.2 3:add 11.3]" {
		t.Fatalf("String() = %s", fm.String())
	}
	bad := []struct {
		in     []string
		target error
		msg    string
	}{
		{[]string{"status.nope"}, fieldmap.ErrUnknownField, `test.Info: unknown field flag "status.nope"`},
		{[]string{"labels:add"}, fieldmap.ErrListAction, `test.Info: list action add on field flag "4": message does not enable list actions (option (edgekit.options.v1.message).list_actions)`},
		{[]string{"key:remove"}, fieldmap.ErrListAction, `test.Info: list action remove on field flag "2": field key is not a repeated or map field`},
		{[]string{"items:append"}, nil, `test.Info: field "items": unknown list action "append" (want replace, add or remove)`},
	}
	for _, b := range bad {
		_, err := testSchema.Parse(b.in...)
		if err == nil {
			t.Errorf("Parse(%v) succeeded", b.in)
			continue
		}
		if b.target != nil && !errors.Is(err, b.target) {
			t.Errorf("Parse(%v) = %v, want errors.Is %v", b.in, err, b.target)
		}
		if err.Error() != b.msg {
			t.Errorf("Parse(%v) message\n got %q\nwant %q", b.in, err.Error(), b.msg)
		}
	}
}

func TestSchemaCheckAndAll(t *testing.T) {
	all := testSchema.All()
	if got, want := all.Fields(), []string{"2.1", "2.2", "3", "4", "11.3", "11.4.1"}; !slices.Equal(got, want) {
		t.Fatalf("All = %v, want %v", got, want)
	}
	if err := testSchema.Check(all); err != nil {
		t.Fatal(err)
	}
	if err := testSchema.Check(nil); err != nil {
		t.Fatal(err)
	}
	if err := testSchema.Check(fieldmap.Of("5")); !errors.Is(err, fieldmap.ErrUnknownField) {
		t.Fatalf("Check(5) = %v", err)
	}
}

func TestCloneIsIndependent(t *testing.T) {
	fm := fieldmap.Of("11.3")
	c := fm.Clone()
	c.Set("2")
	c.Clear("11.3")
	if !fm.Has("11.3") || fm.Has("2") || !fm.HasOrHasChild("11") {
		t.Fatal("Clone shares state with the original")
	}
}

func TestHasDoesNotAllocate(t *testing.T) {
	fm := fieldmap.Of("11.4.1", "2", "3.1")
	allocs := testing.AllocsPerRun(100, func() {
		_ = fm.Has("11.4.1")
		_ = fm.HasOrHasChild("11.4")
		_ = fm.Has("2.2")
	})
	if allocs != 0 {
		t.Fatalf("Has/HasOrHasChild allocate %v times", allocs)
	}
}

func BenchmarkHas(b *testing.B) {
	fm := fieldmap.Of("11.4.1", "2", "3.1", "4", "11.3")
	b.ReportAllocs()
	for b.Loop() {
		if !fm.Has("11.4.1") {
			b.Fatal("not set")
		}
	}
}

// modelSchema has some of the flags of TestAgainstNaiveModel: the others
// are unknown to it, kept as strings by a map bound to it.
var modelSchema = fieldmap.NewShapeSchema("test.Model", &fieldmap.Shape{Fields: []fieldmap.ShapeField{
	{Number: 1, Name: "a"},
	{Number: 2, Name: "b", Kind: fieldmap.KindMessage, Sub: &fieldmap.Shape{Fields: []fieldmap.ShapeField{
		{Number: 1, Name: "c", Kind: fieldmap.KindMessage, Sub: &fieldmap.Shape{Fields: []fieldmap.ShapeField{{Number: 3, Name: "d"}}}},
		{Number: 10, Name: "e"},
	}}},
	{Number: 11, Name: "f", Kind: fieldmap.KindMessage, Sub: &fieldmap.Shape{Fields: []fieldmap.ShapeField{
		{Number: 3, Name: "g"},
		{Number: 4, Name: "h", Kind: fieldmap.KindList, Sub: &fieldmap.Shape{Fields: []fieldmap.ShapeField{{Number: 1, Name: "i"}}}},
	}}},
	{Number: 12, Name: "j"},
	{Number: 100, Name: "k"},
}}, false)

// TestAgainstNaiveModel drives random Set/Clear sequences, on a map bound to
// no schema and on one bound to modelSchema, and checks every query against
// a direct reading of the definitions over the set strings.
func TestAgainstNaiveModel(t *testing.T) {
	flags := []string{"1", "2", "2.1", "2.1.3", "2.10", "11", "11.3", "11.4.1", "63", "63.1", "64", "64.2", "100.7", "12",
		"11.4", "100", "013", "11.", "1..2", "2.1.3.9"}
	isAncestor := func(a, f string) bool { return len(f) > len(a) && f[:len(a)] == a && f[len(a)] == '.' }
	r := uint64(1)
	next := func(n int) int { r = r*6364136223846793005 + 1442695040888963407; return int(r>>33) % n }
	for _, bound := range []bool{false, true} {
		for round := 0; round < 200; round++ {
			fm := &fieldmap.FieldMap{}
			if bound {
				fm = modelSchema.NewFieldMap()
			}
			model := map[string]bool{}
			for step := 0; step < 20; step++ {
				f := flags[next(len(flags))]
				if next(3) == 0 {
					fm.Clear(f)
					delete(model, f)
				} else {
					fm.Set(f)
					model[f] = true
				}
				if fm.Count() != len(model) {
					t.Fatalf("bound %v round %d: Count() = %d with %v", bound, round, fm.Count(), fm)
				}
				for _, q := range flags {
					has, child := model[q], false
					for s := range model {
						has = has || isAncestor(s, q)
						child = child || isAncestor(q, s)
					}
					if got := fm.Has(q); got != has {
						t.Fatalf("bound %v round %d: Has(%q) = %v with %v", bound, round, q, got, fm)
					}
					if got := fm.HasOrHasChild(q); got != (has || child) {
						t.Fatalf("bound %v round %d: HasOrHasChild(%q) = %v with %v", bound, round, q, got, fm)
					}
					if got := fm.IsSet(q); got != model[q] {
						t.Fatalf("bound %v round %d: IsSet(%q) = %v with %v", bound, round, q, got, fm)
					}
					if got := fm.HasChild(q); got != child {
						t.Fatalf("bound %v round %d: HasChild(%q) = %v with %v", bound, round, q, got, fm)
					}
				}
			}
		}
	}
}

// TestIsSetAgreesBelowUnsetAncestors checks the shortcut generated code
// relies on: where no ancestor of a flag is set, IsSet equals Has and
// IsSetOrHasChild equals HasOrHasChild; where Has is false, HasChild equals
// HasOrHasChild.
func TestIsSetAgreesBelowUnsetAncestors(t *testing.T) {
	flags := []string{"1", "2", "2.1", "2.1.3", "2.10", "11", "11.3", "11.4.1", "63.1", "64.2", "100.7"}
	ancestorSet := func(fm *fieldmap.FieldMap, f string) bool {
		for i := 0; i < len(f); i++ {
			if f[i] == '.' && fm.IsSet(f[:i]) {
				return true
			}
		}
		return false
	}
	for mask := 0; mask < 1<<len(flags); mask += 7 {
		fm := &fieldmap.FieldMap{}
		for i, f := range flags {
			if mask&(1<<i) != 0 {
				fm.Set(f)
			}
		}
		for _, q := range append(flags, "2.1.3.4", "99", "11.4") {
			if !fm.Has(q) && fm.HasChild(q) != fm.HasOrHasChild(q) {
				t.Fatalf("%v: Has(%q) is false but HasChild = %v, HasOrHasChild = %v", fm, q, fm.HasChild(q), fm.HasOrHasChild(q))
			}
			if ancestorSet(fm, q) {
				continue
			}
			if fm.IsSet(q) != fm.Has(q) || fm.IsSetOrHasChild(q) != fm.HasOrHasChild(q) {
				t.Fatalf("%v: IsSet/IsSetOrHasChild(%q) disagree with Has/HasOrHasChild", fm, q)
			}
		}
	}
}
