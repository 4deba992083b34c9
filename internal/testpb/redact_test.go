package testpb_test

import (
	"bytes"
	"reflect"
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/edgekit/edgekit/fieldmap"
	"github.com/edgekit/edgekit/internal/randmsg"
	"github.com/edgekit/edgekit/internal/reference"
	"github.com/edgekit/edgekit/internal/testpb"
	otherpb "github.com/edgekit/edgekit/internal/testpb/other"
)

// secret marks every sensitive value the tests plant.
const secret = "s3cr3t"

type redacter interface{ Redact() }

// vrkClone deep-copies m with its generated Clone method: proto.Clone does
// not keep -0 in a float field without presence, so proto.Equal(m,
// proto.Clone(m)) can be false.
func vrkClone(t testing.TB, m proto.Message) proto.Message {
	t.Helper()
	c := reflect.ValueOf(m).MethodByName("Clone")
	if !c.IsValid() {
		t.Fatalf("%T has no generated Clone", m)
	}
	return c.Call(nil)[0].Interface().(proto.Message)
}

// genRedact calls the generated Redact of m.
func genRedact(t testing.TB, m proto.Message) {
	t.Helper()
	r, ok := m.(redacter)
	if !ok {
		t.Fatalf("%T has no generated Redact", m)
	}
	r.Redact()
}

// redactedLeft returns the paths of the redacted fields still set anywhere
// in m.
func redactedLeft(m protoreflect.Message, path string) []string {
	var out []string
	if !m.IsValid() {
		return nil
	}
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		p := path + string(fd.Name())
		if fieldmap.IsRedacted(fd) {
			out = append(out, p)
			return true
		}
		switch {
		case fd.IsMap():
			if fd.MapValue().Message() != nil {
				v.Map().Range(func(_ protoreflect.MapKey, mv protoreflect.Value) bool {
					out = append(out, redactedLeft(mv.Message(), p+".")...)
					return true
				})
			}
		case fd.IsList():
			if fd.Message() != nil {
				for i := 0; i < v.List().Len(); i++ {
					out = append(out, redactedLeft(v.List().Get(i).Message(), p+".")...)
				}
			}
		case fd.Message() != nil:
			out = append(out, redactedLeft(v.Message(), p+".")...)
		}
		return true
	})
	return out
}

// checkNoSecret fails when m still holds a redacted field or the secret
// marker anywhere in its encoding.
func checkNoSecret(t testing.TB, m proto.Message) {
	t.Helper()
	if left := redactedLeft(m.ProtoReflect(), ""); len(left) > 0 {
		t.Errorf("%T: redacted fields still set: %v", m, left)
	}
	b, err := proto.MarshalOptions{Deterministic: true}.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(b, []byte(secret)) {
		t.Errorf("%T: the secret survived Redact: %v", m, m)
	}
}

func secretLeaf(name string) *testpb.Leaf {
	return &testpb.Leaf{Name: name, Value: 3, State: testpb.State_STATE_ON, Token: secret}
}

func secretLabel() *otherpb.Label {
	return &otherpb.Label{Name: "lbl", Color: otherpb.Color_COLOR_RED, Secret: secret, Weights: []int32{1, 2}}
}

func secretInner(name string) *testpb.Outer_Inner {
	return &testpb.Outer_Inner{Kind: testpb.Outer_Inner_KIND_A, Secret: secret + name}
}

func secretOuter() *testpb.Outer {
	return &testpb.Outer{
		Inner:    secretInner("i"),
		Inners:   []*testpb.Outer_Inner{secretInner("a"), nil, secretInner("b")},
		InnerMap: map[string]*testpb.Outer_Inner{"x": secretInner("x"), "nil": nil},
	}
}

func secretTop() *testpb.Top {
	return &testpb.Top{
		Key:         &testpb.Key{Organization: "acme", Name: "k"},
		Middle:      &testpb.Middle{Name: "m", Leaf: secretLeaf("ml"), Leaves: []*testpb.Leaf{secretLeaf("m0"), secretLeaf("m1")}},
		Tags:        []string{"t"},
		Middles:     []*testpb.Middle{{Leaf: secretLeaf("x")}, nil, {Leaves: []*testpb.Leaf{nil, secretLeaf("y")}}},
		Labels:      map[string]string{"env": "prod"},
		LeafMap:     map[int32]*testpb.Leaf{1: secretLeaf("a"), 2: secretLeaf("b"), 3: nil},
		Choice:      &testpb.Top_ChoiceLeaf{ChoiceLeaf: secretLeaf("c")},
		Optionals:   &testpb.Optionals{OMessage: secretLeaf("o"), OString: vrkPtr("kept")},
		Label:       secretLabel(),
		LabelsOther: []*otherpb.Label{secretLabel(), secretLabel()},
		Password:    secret,
		AtomicLeaf:  secretLeaf("atomic"),
		LabelMap:    map[string]*otherpb.Label{"l": secretLabel()},
		Empty:       &testpb.Empty{},
	}
}

func secretSecrets() *testpb.Secrets {
	return &testpb.Secrets{
		ApiKey:  secret,
		Leaf:    secretLeaf("leaf"),
		Leaves:  []*testpb.Leaf{secretLeaf("l0"), secretLeaf("l1")},
		LeafMap: map[string]*testpb.Leaf{"a": secretLeaf("a")},
		Cred:    &testpb.Secrets_CredLeaf{CredLeaf: secretLeaf("cred")},
		Outer:   secretOuter(),
		Label:   secretLabel(),
		Cert:    []byte(secret),
		Env:     map[string]string{"TOKEN": secret},
	}
}

// noLeafToken returns l with its token cleared, the only redacted field.
func noLeafToken(l *testpb.Leaf) *testpb.Leaf {
	if l == nil {
		return nil
	}
	l = proto.CloneOf(l)
	l.Token = ""
	return l
}

func TestRedactSecrets(t *testing.T) {
	m := secretSecrets()
	m.Redact()
	checkNoSecret(t, m)
	// Every field that is not redacted is left as it was.
	want := &testpb.Secrets{
		Leaf:    noLeafToken(secretLeaf("leaf")),
		Leaves:  []*testpb.Leaf{noLeafToken(secretLeaf("l0")), noLeafToken(secretLeaf("l1"))},
		LeafMap: map[string]*testpb.Leaf{"a": noLeafToken(secretLeaf("a"))},
		Cred:    &testpb.Secrets_CredLeaf{CredLeaf: noLeafToken(secretLeaf("cred"))},
		Outer: &testpb.Outer{
			Inner:    &testpb.Outer_Inner{Kind: testpb.Outer_Inner_KIND_A},
			Inners:   []*testpb.Outer_Inner{{Kind: testpb.Outer_Inner_KIND_A}, nil, {Kind: testpb.Outer_Inner_KIND_A}},
			InnerMap: map[string]*testpb.Outer_Inner{"x": {Kind: testpb.Outer_Inner_KIND_A}, "nil": nil},
		},
		Label: &otherpb.Label{Name: "lbl", Color: otherpb.Color_COLOR_RED, Weights: []int32{1, 2}},
	}
	if !proto.Equal(m, want) {
		t.Errorf("Redact:\n got %v\nwant %v", m, want)
	}
	if m.Cert != nil || m.Env != nil {
		t.Errorf("redacted bytes and map are not nil: %q %v", m.Cert, m.Env)
	}
}

func TestRedactOneof(t *testing.T) {
	m := &testpb.Secrets{Cred: &testpb.Secrets_CredToken{CredToken: secret}}
	m.Redact()
	if m.Cred != nil {
		t.Errorf("redacted oneof member set: Cred = %v, want nil", m.Cred)
	}
	m = &testpb.Secrets{Cred: &testpb.Secrets_CredUser{CredUser: "bob"}}
	m.Redact()
	if u, ok := m.Cred.(*testpb.Secrets_CredUser); !ok || u.CredUser != "bob" {
		t.Errorf("non-redacted oneof member: Cred = %v, want cred_user bob", m.Cred)
	}
	m = &testpb.Secrets{Cred: &testpb.Secrets_CredLeaf{}} // typed nil message
	m.Redact()
	if l, ok := m.Cred.(*testpb.Secrets_CredLeaf); !ok || l.CredLeaf != nil {
		t.Errorf("oneof holding a nil message: Cred = %v", m.Cred)
	}
}

func TestRedactEveryDepth(t *testing.T) {
	legacy := &testpb.Legacy{Id: vrkPtr("id"), Secret: vrkPtr(secret), Count: vrkPtr(int32(4)),
		Next: &testpb.Legacy{Id: vrkPtr("n"), Secret: vrkPtr(secret), Next: &testpb.Legacy{Id: vrkPtr("nn"), Secret: vrkPtr(secret)}}}
	modern := &testpb.Modern{Name: vrkPtr("m"), Secret: vrkPtr(secret), Parts: map[string]*testpb.Part{"p": {Label: vrkPtr("x")}}}
	for _, m := range []proto.Message{secretTop(), secretSecrets(), secretOuter(), legacy, modern, secretLabel()} {
		t.Run(string(m.ProtoReflect().Descriptor().Name()), func(t *testing.T) {
			want := vrkClone(t, m)
			reference.Redact(want.ProtoReflect())
			genRedact(t, m)
			checkNoSecret(t, m)
			if !proto.Equal(m, want) {
				t.Errorf("Redact:\n got %v\nwant %v", m, want)
			}
		})
	}
	if legacy.GetId() != "id" || legacy.GetCount() != 4 || legacy.Next.GetId() != "n" || legacy.Secret != nil || legacy.Next.Next.Secret != nil {
		t.Errorf("Legacy after Redact: %v", legacy)
	}
	if modern.GetName() != "m" || modern.Secret != nil || modern.Parts["p"].GetLabel() != "x" {
		t.Errorf("Modern after Redact: %v", modern)
	}
}

func TestRedactNil(t *testing.T) {
	for _, m := range []redacter{(*testpb.Top)(nil), (*testpb.Secrets)(nil), (*testpb.Legacy)(nil), (*otherpb.Label)(nil), (*testpb.Empty)(nil)} {
		m.Redact() // must not panic
	}
	if (*testpb.Secrets)(nil).Redacted() != nil || (*testpb.Legacy)(nil).Redacted() != nil {
		t.Error("Redacted of nil is not nil")
	}
}

func TestRedactedLeavesOriginal(t *testing.T) {
	orig := secretSecrets()
	before := vrkClone(t, orig)
	red := orig.Redacted()
	if !proto.Equal(orig, before) {
		t.Fatalf("Redacted changed its receiver:\n got %v\nwant %v", orig, before)
	}
	checkNoSecret(t, red)
	want := proto.CloneOf(before.(*testpb.Secrets))
	want.Redact()
	if !proto.Equal(red, want) {
		t.Errorf("Redacted:\n got %v\nwant %v", red, want)
	}
	// The copy shares nothing: redacting or changing it leaves orig alone.
	red.Leaf.Name = "changed"
	red.Outer.Inners[0].Kind = 0
	if !proto.Equal(orig, before) {
		t.Error("Redacted shares memory with its receiver")
	}

	legacy := &testpb.Legacy{Id: vrkPtr("x"), Secret: vrkPtr(secret)}
	lr := legacy.Redacted()
	if legacy.GetSecret() != secret || lr.Secret != nil || lr.GetId() != "x" {
		t.Errorf("Legacy Redacted: orig %v, copy %v", legacy, lr)
	}
}

// TestRedactMatchesReference fills every generated type at random and holds
// Redact and Redacted to the reference.
func TestRedactMatchesReference(t *testing.T) {
	changed := 0
	for _, mt := range vrkTypes(t) {
		for seed := range uint64(100) {
			m := mt.New().Interface()
			randmsg.Fill(m.ProtoReflect(), randmsg.New(seed), randmsg.Options{MaxDepth: 4, Unknown: true})
			orig := vrkClone(t, m)
			want := vrkClone(t, m)
			reference.Redact(want.ProtoReflect())
			if !proto.Equal(want, orig) {
				changed++
			}
			genRedact(t, m)
			if !proto.Equal(m, want) {
				t.Fatalf("%s seed %d: Redact:\n got %v\nwant %v", mt.Descriptor().FullName(), seed, m, want)
			}
			if left := redactedLeft(m.ProtoReflect(), ""); len(left) > 0 {
				t.Fatalf("%s seed %d: redacted fields left: %v", mt.Descriptor().FullName(), seed, left)
			}
		}
	}
	if changed == 0 {
		t.Fatal("no random message held a redacted field: the test proves nothing")
	}
	t.Logf("%d random messages held a redacted field", changed)
}

// TestRedactedMatchesRedact checks Redacted on random messages of the types
// that hold secrets: a redacted copy, the original untouched.
func TestRedactedMatchesRedact(t *testing.T) {
	check := func(t *testing.T, orig proto.Message, redacted func() proto.Message) {
		t.Helper()
		before := vrkClone(t, orig)
		got := redacted()
		if !proto.Equal(orig, before) {
			t.Fatalf("Redacted changed its receiver")
		}
		want := vrkClone(t, orig)
		reference.Redact(want.ProtoReflect())
		if !proto.Equal(got, want) {
			t.Fatalf("Redacted:\n got %v\nwant %v", got, want)
		}
	}
	for seed := range uint64(100) {
		r := randmsg.New(seed)
		opts := randmsg.Options{MaxDepth: 4, Unknown: true}
		top, sec, leg, mod := &testpb.Top{}, &testpb.Secrets{}, &testpb.Legacy{}, &testpb.Modern{}
		for _, m := range []proto.Message{top, sec, leg, mod} {
			randmsg.Fill(m.ProtoReflect(), r, opts)
		}
		check(t, top, func() proto.Message { return top.Redacted() })
		check(t, sec, func() proto.Message { return sec.Redacted() })
		check(t, leg, func() proto.Message { return leg.Redacted() })
		check(t, mod, func() proto.Message { return mod.Redacted() })
	}
}
