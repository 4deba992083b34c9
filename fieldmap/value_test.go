package fieldmap

import (
	"math"
	"strings"
	"testing"
	"unsafe"
)

// vmsg is a message for the Value tests: its Equal is what generated code
// has, nil equal only to nil.
type vmsg struct {
	N    int64
	Tags []string
}

func (m *vmsg) Equal(o *vmsg) bool {
	if m == nil || o == nil {
		return m == o
	}
	return m.N == o.N && len(m.Tags) == len(o.Tags)
}

// vbig is a message larger than zeroMessages.
type vbig struct {
	Pad [600]uint64
	N   int64
}

func (m *vbig) Equal(o *vbig) bool {
	if m == nil || o == nil {
		return m == o
	}
	return *m == *o
}

// A oneof as protoc-gen-go declares one: an unexported interface and a
// wrapper struct per member, the member's value its one field.
type isVholderPick interface{ isVholderPick() }

type vholderNum struct{ Num float64 }
type vholderName struct{ Name string }
type vholderMsg struct{ Msg *vmsg }

func (*vholderNum) isVholderPick()  {}
func (*vholderName) isVholderPick() {}
func (*vholderMsg) isVholderPick()  {}

type vholder struct {
	Pick isVholderPick
	List []*vmsg
	Big  []*vbig
	One  *vmsg
}

var (
	vNum  = &OpMember{Off: unsafe.Offsetof(vholder{}.Pick), Wrapper: (*vholderNum)(nil), Op: OpFloat64}
	vName = &OpMember{Off: unsafe.Offsetof(vholder{}.Pick), Wrapper: (*vholderName)(nil), Op: OpString}
	vMsg  = &EqMember{Off: unsafe.Offsetof(vholder{}.Pick), Wrapper: (*vholderMsg)(nil), Eq: (*vmsg).Equal}
	vList = &EqMessageList{Off: unsafe.Offsetof(vholder{}.List), Eq: (*vmsg).Equal, Size: unsafe.Sizeof(vmsg{})}
	vBig  = &EqMessageList{Off: unsafe.Offsetof(vholder{}.Big), Eq: (*vbig).Equal, Size: unsafe.Sizeof(vbig{})}
	vOne  = &EqMessage{Off: unsafe.Offsetof(vholder{}.One), Eq: (*vmsg).Equal}
)

func veq(v Value, a, b *vholder) bool { return v.equal(unsafe.Pointer(a), unsafe.Pointer(b)) }

func TestEqMessageList(t *testing.T) {
	for _, c := range []struct {
		name string
		a, b []*vmsg
		want bool
	}{
		{"nil and empty lists", nil, []*vmsg{}, true},
		{"equal elements", []*vmsg{{N: 1}, {N: 2}}, []*vmsg{{N: 1}, {N: 2}}, true},
		{"an element differs", []*vmsg{{N: 1}, {N: 2}}, []*vmsg{{N: 1}, {N: 3}}, false},
		{"lengths differ", []*vmsg{{N: 1}}, []*vmsg{{N: 1}, {}}, false},
		{"nil element and empty message", []*vmsg{nil}, []*vmsg{{}}, true},
		{"empty message and nil element", []*vmsg{{}}, []*vmsg{nil}, true},
		{"nil element and non-empty message", []*vmsg{nil}, []*vmsg{{N: 1}}, false},
		{"non-empty message and nil element", []*vmsg{{Tags: []string{"x"}}}, []*vmsg{nil}, false},
		{"nil elements", []*vmsg{nil, nil}, []*vmsg{nil, nil}, true},
	} {
		if got := veq(vList, &vholder{List: c.a}, &vholder{List: c.b}); got != c.want {
			t.Errorf("%s: equal = %v, want %v", c.name, got, c.want)
		}
	}
	if !veq(vBig, &vholder{Big: []*vbig{nil}}, &vholder{Big: []*vbig{{}}}) {
		t.Error("large message: a nil element differs from an empty message")
	}
	if veq(vBig, &vholder{Big: []*vbig{nil}}, &vholder{Big: []*vbig{{N: 1}}}) {
		t.Error("large message: a nil element equals a non-empty message")
	}
	// Eq may write into the empty message a nil element stands for (an Eq
	// that falls back to proto.Equal stores the message's runtime state):
	// each comparison gets a fresh one.
	lazy := &EqMessageList{Off: unsafe.Offsetof(vlazyHolder{}.List), Eq: (*vlazy).Equal, Size: unsafe.Sizeof(vlazy{})}
	for i := range 3 {
		a, b := &vlazyHolder{List: []*vlazy{nil}}, &vlazyHolder{List: []*vlazy{{}}}
		if !lazy.equal(unsafe.Pointer(a), unsafe.Pointer(b)) || !lazy.equal(unsafe.Pointer(b), unsafe.Pointer(a)) {
			t.Fatalf("comparison %d: a nil element differs from an empty message after Eq wrote into an empty one", i)
		}
	}
}

// vlazy's Equal marks its receiver, as proto.Equal initializes the state of
// a message it first sees, and compares the marks too.
type vlazy struct {
	mark int64
	N    int64
}

func (m *vlazy) Equal(o *vlazy) bool {
	if m == nil || o == nil {
		return m == o
	}
	r := m.N == o.N && m.mark == o.mark
	m.mark = 1
	return r
}

type vlazyHolder struct{ List []*vlazy }

func TestEqMessage(t *testing.T) {
	if !veq(vOne, &vholder{}, &vholder{}) || veq(vOne, &vholder{}, &vholder{One: &vmsg{}}) ||
		!veq(vOne, &vholder{One: &vmsg{N: 1}}, &vholder{One: &vmsg{N: 1}}) || veq(vOne, &vholder{One: &vmsg{N: 1}}, &vholder{One: &vmsg{N: 2}}) {
		t.Error("EqMessage: absent, empty and set messages compare wrongly")
	}
	h := &vholder{One: &vmsg{N: 1}}
	if !vOne.present(unsafe.Pointer(h)) || vOne.get(unsafe.Pointer(h)) != unsafe.Pointer(h.One) || vOne.present(unsafe.Pointer(&vholder{})) {
		t.Error("EqMessage: present or get is wrong")
	}
}

func TestOpMember(t *testing.T) {
	num := func(f float64) *vholder { return &vholder{Pick: &vholderNum{Num: f}} }
	for _, c := range []struct {
		name string
		a, b *vholder
		want bool
	}{
		{"both unset", &vholder{}, &vholder{}, true},
		{"set and unset", num(0), &vholder{}, false},
		{"equal", num(1.5), num(1.5), true},
		{"different", num(1.5), num(2), false},
		{"-0 and +0 (a member compares values)", num(math.Copysign(0, -1)), num(0), true},
		{"NaN and NaN", num(math.NaN()), num(math.NaN()), true},
		{"another member", num(0), &vholder{Pick: &vholderName{}}, false},
		{"another member on both sides", &vholder{Pick: &vholderName{Name: "a"}}, &vholder{Pick: &vholderName{Name: "b"}}, true},
		{"a typed nil wrapper holds no member", &vholder{Pick: (*vholderNum)(nil)}, &vholder{}, true},
		{"a typed nil wrapper and a member", &vholder{Pick: (*vholderNum)(nil)}, num(0), false},
	} {
		if got := veq(vNum, c.a, c.b); got != c.want {
			t.Errorf("%s: equal = %v, want %v", c.name, got, c.want)
		}
	}
	if veq(vName, &vholder{Pick: &vholderName{Name: "a"}}, &vholder{Pick: &vholderName{Name: "b"}}) ||
		!veq(vName, &vholder{Pick: &vholderName{Name: "a"}}, &vholder{Pick: &vholderName{Name: "a"}}) {
		t.Error("OpMember: strings compare wrongly")
	}
}

func TestEqMember(t *testing.T) {
	msg := func(m *vmsg) *vholder { return &vholder{Pick: &vholderMsg{Msg: m}} }
	for _, c := range []struct {
		name string
		a, b *vholder
		want bool
	}{
		{"both unset", &vholder{}, &vholder{}, true},
		{"equal", msg(&vmsg{N: 1}), msg(&vmsg{N: 1}), true},
		{"different", msg(&vmsg{N: 1}), msg(&vmsg{N: 2}), false},
		{"set and unset", msg(&vmsg{}), &vholder{}, false},
		{"another member", msg(&vmsg{}), &vholder{Pick: &vholderName{}}, false},
	} {
		if got := veq(vMsg, c.a, c.b); got != c.want {
			t.Errorf("%s: equal = %v, want %v", c.name, got, c.want)
		}
	}
	h := msg(&vmsg{N: 1})
	if !vMsg.present(unsafe.Pointer(h)) || vMsg.get(unsafe.Pointer(h)) != unsafe.Pointer(h.Pick.(*vholderMsg).Msg) {
		t.Error("EqMember: a set member is not present, or get returns another message")
	}
	for _, o := range []*vholder{{}, {Pick: &vholderName{}}, {Pick: (*vholderMsg)(nil)}} {
		if vMsg.present(unsafe.Pointer(o)) || vMsg.get(unsafe.Pointer(o)) != nil {
			t.Errorf("EqMember: member %T reads as present", o.Pick)
		}
	}
}

// TestValueCheck: a shape whose Value holds an Eq or Wrapper of the wrong
// type fails when it is prepared, naming the field, instead of calling a
// function of another signature.
func TestValueCheck(t *testing.T) {
	for _, c := range []struct {
		name string
		v    Value
	}{
		{"Eq of another signature", &EqMessage{Eq: func(a *vmsg) bool { return false }}},
		{"Eq over two types", &EqMessage{Eq: func(a *vmsg, b *vbig) bool { return false }}},
		{"no Eq", &EqMessageList{Size: 8}},
		{"no Size", &EqMessageList{Eq: (*vmsg).Equal}},
		{"Size of another type", &EqMessageList{Eq: (*vmsg).Equal, Size: unsafe.Sizeof(vbig{})}},
		{"Wrapper not a pointer", &OpMember{Wrapper: vholderNum{}, Op: OpFloat64}},
		{"Op of a list", &OpMember{Wrapper: (*vholderNum)(nil), Op: OpListString}},
		{"no Wrapper", &EqMember{Eq: (*vmsg).Equal}},
	} {
		sh := &Shape{Size: 8, Fields: []ShapeField{{Number: 7, Name: "pick", Value: c.v}}}
		msg := func() (msg string) {
			defer func() { msg, _ = recover().(string) }()
			sh.prepare()
			return ""
		}()
		if !strings.Contains(msg, "field 7 (pick)") {
			t.Errorf("%s: prepare panicked with %q, want a message naming field 7 (pick)", c.name, msg)
		}
	}
	good := &Shape{Size: unsafe.Sizeof(vholder{}), Fields: []ShapeField{
		{Number: 1, Name: "num", Value: vNum}, {Number: 2, Name: "msg", Value: vMsg},
		{Number: 3, Name: "list", Kind: KindList, Value: vList}, {Number: 4, Name: "one", Value: vOne},
	}}
	good.prepare()
}
