package testpb_test

import (
	"cmp"
	"errors"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/fieldmap"
	"github.com/edgekit/edgekit/fluidos"
	"github.com/edgekit/edgekit/internal/randmsg"
	"github.com/edgekit/edgekit/internal/testpb"
)

func TestKeyStringGolden(t *testing.T) {
	cases := []struct {
		name string
		msg  interface{ GetKeyString() string }
		want string
	}{
		{"top", &testpb.Top{Key: &testpb.Key{Organization: "acme", Name: "c1", Version: 1, State: testpb.State_STATE_ON,
			Sub: &testpb.SubKey{Region: "eu", Zone: -3, Edge: true}}},
			"organization=acme,name=c1,version=1,state=STATE_ON,sub.region=eu,sub.zone=-3,sub.edge=true"},
		{"top without key", &testpb.Top{},
			"organization=,name=,version=0,state=STATE_UNSPECIFIED,sub.region=,sub.zone=0,sub.edge=false"},
		{"nil top", (*testpb.Top)(nil),
			"organization=,name=,version=0,state=STATE_UNSPECIFIED,sub.region=,sub.zone=0,sub.edge=false"},
		{"escapes", &testpb.Top{Key: &testpb.Key{Organization: "a,b=c%d", Name: "x\ny\x00", Version: 4294967295, State: 42,
			Sub: &testpb.SubKey{Region: "zürich 東京", Zone: -9223372036854775808}}},
			"organization=a%2Cb%3Dc%25d,name=x%0Ay%00,version=4294967295,state=42,sub.region=zürich 東京,sub.zone=-9223372036854775808,sub.edge=false"},
		{"invalid utf-8", &testpb.Top{Key: &testpb.Key{Name: "\xff\xfe"}},
			"organization=,name=%FF%FE,version=0,state=STATE_UNSPECIFIED,sub.region=,sub.zone=0,sub.edge=false"},
		{"scalar key", &testpb.NamedKey{Id: "n,1=%", Note: "ignored"}, "n%2C1%3D%25"},
		{"empty scalar key", &testpb.NamedKey{}, ""},
		{"domain", &edgeproto.ClusterInst{Key: &edgeproto.ClusterKey{Name: "c1", Organization: "dev"}}, "name=c1,organization=dev"},
		{"domain nested", &edgeproto.TrustPolicyException{Key: &edgeproto.TrustPolicyExceptionKey{
			AppKey:          &edgeproto.AppKey{Organization: "dev", Name: "app", Version: "1.0"},
			CloudletPoolKey: &edgeproto.CloudletPoolKey{Organization: "op", Name: "pool"},
			Name:            "ex"}},
			"app_key.organization=dev,app_key.name=app,app_key.version=1.0,cloudlet_pool_key.organization=op,cloudlet_pool_key.name=pool,name=ex"},
		{"domain scalar", &fluidos.Flavor{Id: "flavor-1"}, "flavor-1"},
	}
	for _, c := range cases {
		if got := c.msg.GetKeyString(); got != c.want {
			t.Errorf("%s: GetKeyString() = %q, want %q", c.name, got, c.want)
		}
	}
	if got := (&testpb.NamedKey{Id: "x"}).GetKey(); got != "x" {
		t.Errorf("NamedKey.GetKey() = %q", got)
	}
	if got := (*testpb.NamedKey)(nil).GetKey(); got != "" {
		t.Errorf("nil NamedKey.GetKey() = %q", got)
	}
}

func TestParseKeyString(t *testing.T) {
	want := &testpb.Key{Organization: "a,b", Name: "c1", Version: 7, State: testpb.State_STATE_OFF,
		Sub: &testpb.SubKey{Region: "eu", Zone: 12, Edge: true}}
	for _, s := range []string{
		"organization=a%2Cb,name=c1,version=7,state=STATE_OFF,sub.region=eu,sub.zone=12,sub.edge=true",
		"sub.edge=true,sub.zone=12,sub.region=eu,state=STATE_OFF,version=7,name=c1,organization=a%2cb", // any order, either hex case
		"organization=a%2Cb,name=c1,version=7,state=2,sub.region=eu,sub.zone=12,sub.edge=true",         // enum by number
	} {
		got, err := testpb.ParseTopKeyString(s)
		if err != nil || !proto.Equal(got, want) {
			t.Errorf("ParseTopKeyString(%q) = %v, %v; want %v", s, got, err, want)
		}
	}
	// Fields left out are zero; sub-messages are always allocated.
	got, err := testpb.ParseTopKeyString("name=x")
	if want := (&testpb.Key{Name: "x", Sub: &testpb.SubKey{}}); err != nil || !proto.Equal(got, want) {
		t.Errorf("ParseTopKeyString(name=x) = %v, %v; want %v", got, err, want)
	}
	got, err = testpb.ParseTopKeyString("")
	if err != nil || got.GetSub() == nil || !proto.Equal(got, &testpb.Key{Sub: &testpb.SubKey{}}) {
		t.Errorf(`ParseTopKeyString("") = %v, %v`, got, err)
	}
	if got, err := testpb.ParseTopKeyString("state=-5"); err != nil || got.State != -5 {
		t.Errorf("undefined enum number: %v, %v", got, err)
	}
	if id, err := testpb.ParseNamedKeyKeyString("n%2C1%3D%25"); err != nil || id != "n,1=%" {
		t.Errorf("ParseNamedKeyKeyString = %q, %v", id, err)
	}
	if id, err := fluidos.ParseFlavorKeyString("flavor-1"); err != nil || id != "flavor-1" {
		t.Errorf("fluidos.ParseFlavorKeyString = %q, %v", id, err)
	}
}

func TestParseKeyStringErrors(t *testing.T) {
	cases := []struct {
		in    string
		want  error
		field string
	}{
		{"bogus=1", fieldmap.ErrKeyUnknownField, "bogus"},
		{"sub=1", fieldmap.ErrKeyUnknownField, "sub"},
		{"sub.bogus=1", fieldmap.ErrKeyUnknownField, "sub.bogus"},
		{"Name=x", fieldmap.ErrKeyUnknownField, "Name"},
		{"name=a,name=b", fieldmap.ErrKeyDuplicateField, "name"},
		{"name=a,version", fieldmap.ErrKeyMissingEquals, ""},
		{"name=a,,version=1", fieldmap.ErrKeyMissingEquals, ""},
		{"version=x", fieldmap.ErrKeyBadNumber, "version"},
		{"version=-1", fieldmap.ErrKeyBadNumber, "version"},
		{"version=4294967296", fieldmap.ErrKeyBadNumber, "version"},
		{"sub.zone=1.5", fieldmap.ErrKeyBadNumber, "sub.zone"},
		{"sub.zone=", fieldmap.ErrKeyBadNumber, "sub.zone"},
		{"sub.edge=yes", fieldmap.ErrKeyBadBool, "sub.edge"},
		{"state=STATE_MAYBE", fieldmap.ErrKeyUnknownEnum, "state"},
		{"state=state_on", fieldmap.ErrKeyUnknownEnum, "state"},
		{"state=2147483648", fieldmap.ErrKeyUnknownEnum, "state"},
		{"name=%zz", fieldmap.ErrKeyBadEscape, "name"},
		{"name=a%2", fieldmap.ErrKeyBadEscape, "name"},
		{"name=a=b", fieldmap.ErrKeyBadEscape, "name"},
		// Top's key is proto3: its strings must be UTF-8, or the key would
		// not marshal.
		{"name=\xff", fieldmap.ErrKeyInvalidUTF8, "name"},
		{"name=%FF", fieldmap.ErrKeyInvalidUTF8, "name"},
		{"sub.region=eu%E6%97", fieldmap.ErrKeyInvalidUTF8, "sub.region"},
	}
	for _, c := range cases {
		got, err := testpb.ParseTopKeyString(c.in)
		if got != nil || !errors.Is(err, c.want) || !errors.Is(err, fieldmap.ErrBadKeyString) {
			t.Errorf("ParseTopKeyString(%q) = %v, %v; want %v", c.in, got, err, c.want)
			continue
		}
		var ke *fieldmap.KeyStringError
		if !errors.As(err, &ke) || ke.Message != "testpb.v1.Top" || ke.Field != c.field {
			t.Errorf("ParseTopKeyString(%q): error %#v, want field %q of testpb.v1.Top", c.in, err, c.field)
		}
	}
	for _, in := range []string{"a,b", "%", "x=y"} {
		if _, err := testpb.ParseNamedKeyKeyString(in); !errors.Is(err, fieldmap.ErrKeyBadEscape) || !errors.Is(err, fieldmap.ErrBadKeyString) {
			t.Errorf("ParseNamedKeyKeyString(%q): %v, want a bad escape", in, err)
		}
	}
}

// keyCase exercises the key methods of one message type.
type keyCase struct {
	newMsg func() proto.Message
	render func(proto.Message) string
	key    func(proto.Message) any
	parse  func(string) (any, error)
	// minDistinct is how many distinct keys 300 random messages must give
	// at least; 0 means 100 (for key types with few values, such as an enum
	// or an empty message, less).
	minDistinct int
}

func (c keyCase) distinct() int { return cmp.Or(c.minDistinct, 100) }

// few returns c for a key type with few values.
func (c keyCase) few(n int) keyCase {
	c.minDistinct = n
	return c
}

type keyed[K any] interface {
	proto.Message
	GetKeyString() string
	GetKey() K
}

func keyCaseOf[M keyed[K], K any](newMsg func() M, parse func(string) (K, error)) keyCase {
	return keyCase{
		newMsg: func() proto.Message { return newMsg() },
		render: func(m proto.Message) string { return m.(M).GetKeyString() },
		key:    func(m proto.Message) any { return m.(M).GetKey() },
		parse: func(s string) (any, error) {
			k, err := parse(s)
			return k, err
		},
	}
}

func newOf[M any, P interface{ *M }]() P { return P(new(M)) }

// keyCases lists every generated message with an object key.
func keyCases() []keyCase {
	return []keyCase{
		keyCaseOf(newOf[testpb.Top], testpb.ParseTopKeyString),
		keyCaseOf(newOf[testpb.NamedKey], testpb.ParseNamedKeyKeyString),
		keyCaseOf(newOf[testpb.TortureKey], testpb.ParseTortureKeyKeyString),
		keyCaseOf(newOf[testpb.TortureEnumKey], testpb.ParseTortureEnumKeyKeyString).few(4),
		keyCaseOf(newOf[testpb.TortureEmptyKey], testpb.ParseTortureEmptyKeyKeyString).few(1),
		keyCaseOf(newOf[testpb.TortureOptionalKey], testpb.ParseTortureOptionalKeyKeyString).few(50),
		keyCaseOf(newOf[testpb.TortureLegacyKey], testpb.ParseTortureLegacyKeyKeyString),
		keyCaseOf(newOf[testpb.TortureLegacyKey2], testpb.ParseTortureLegacyKey2KeyString),
		keyCaseOf(newOf[testpb.TortureSignHolder], testpb.ParseTortureSignHolderKeyString).few(4),
		keyCaseOf(newOf[testpb.TortureEditionKey], testpb.ParseTortureEditionKeyKeyString).few(3),
		keyCaseOf(newOf[testpb.TortureEditionKeyed], testpb.ParseTortureEditionKeyedKeyString),
		keyCaseOf(newOf[edgeproto.App], edgeproto.ParseAppKeyString),
		keyCaseOf(newOf[edgeproto.AppInst], edgeproto.ParseAppInstKeyString),
		keyCaseOf(newOf[edgeproto.AppInstInfo], edgeproto.ParseAppInstInfoKeyString),
		keyCaseOf(newOf[edgeproto.Cloudlet], edgeproto.ParseCloudletKeyString),
		keyCaseOf(newOf[edgeproto.CloudletInfo], edgeproto.ParseCloudletInfoKeyString),
		keyCaseOf(newOf[edgeproto.ClusterInst], edgeproto.ParseClusterInstKeyString),
		keyCaseOf(newOf[edgeproto.ClusterInstInfo], edgeproto.ParseClusterInstInfoKeyString),
		keyCaseOf(newOf[edgeproto.Flavor], edgeproto.ParseFlavorKeyString),
		keyCaseOf(newOf[edgeproto.TrustPolicy], edgeproto.ParseTrustPolicyKeyString),
		keyCaseOf(newOf[edgeproto.TrustPolicyException], edgeproto.ParseTrustPolicyExceptionKeyString),
		keyCaseOf(newOf[fluidos.Allocation], fluidos.ParseAllocationKeyString),
		keyCaseOf(newOf[fluidos.ServiceBlueprint], fluidos.ParseServiceBlueprintKeyString),
		keyCaseOf(newOf[fluidos.Contract], fluidos.ParseContractKeyString),
		keyCaseOf(newOf[fluidos.Discovery], fluidos.ParseDiscoveryKeyString),
		keyCaseOf(newOf[fluidos.PeeringCandidate], fluidos.ParsePeeringCandidateKeyString),
		keyCaseOf(newOf[fluidos.Flavor], fluidos.ParseFlavorKeyString),
		keyCaseOf(newOf[fluidos.Reservation], fluidos.ParseReservationKeyString),
		keyCaseOf(newOf[fluidos.Transaction], fluidos.ParseTransactionKeyString),
		keyCaseOf(newOf[fluidos.Solver], fluidos.ParseSolverKeyString),
	}
}

// canonicalKey returns the form of key k that parsing gives: a nil key or
// sub-message allocated, an unset optional field set to its default.
func canonicalKey(k any) any {
	m, ok := k.(proto.Message)
	if !ok {
		return k
	}
	r := m.ProtoReflect()
	if r.IsValid() {
		// proto.Clone drops implicit-presence -0 floats; snapshot keeps them.
		r = snapshot(m).ProtoReflect()
	} else {
		r = r.Type().New()
	}
	var fill func(protoreflect.Message)
	fill = func(m protoreflect.Message) {
		fields := m.Descriptor().Fields()
		for i := 0; i < fields.Len(); i++ {
			fd := fields.Get(i)
			switch {
			case fd.Message() != nil:
				fill(m.Mutable(fd).Message())
			case fd.HasPresence() && !m.Has(fd):
				m.Set(fd, m.Get(fd))
			}
		}
	}
	fill(r)
	return r.Interface()
}

func sameKey(a, b any) bool {
	am, ok := a.(proto.Message)
	if !ok {
		// A scalar key: NaN is one key, as under proto.Equal.
		return a == b || a != a && b != b
	}
	bm, ok := b.(proto.Message)
	return ok && proto.Equal(am, bm)
}

// TestKeyStringRoundTrip holds every generated key to
// Parse(GetKeyString()) == canonical key, on random messages, and checks
// that distinct canonical keys never render alike.
func TestKeyStringRoundTrip(t *testing.T) {
	for _, c := range keyCases() {
		name := string(c.newMsg().ProtoReflect().Descriptor().FullName())
		t.Run(name, func(t *testing.T) {
			seen := map[string]any{}
			for seed := range uint64(300) {
				m := c.newMsg()
				randmsg.Fill(m.ProtoReflect(), randmsg.New(seed), randmsg.Options{UndefinedEnums: true})
				s := c.render(m)
				if again := c.render(m); again != s {
					t.Fatalf("GetKeyString is not deterministic: %q then %q", s, again)
				}
				want := canonicalKey(c.key(m))
				got, err := c.parse(s)
				if err != nil {
					t.Fatalf("seed %d: parse(%q): %v", seed, s, err)
				}
				if !sameKey(got, want) {
					t.Fatalf("seed %d: parse(%q) = %v, want %v", seed, s, got, want)
				}
				if prev, ok := seen[s]; ok && !sameKey(prev, want) {
					t.Fatalf("keys %v and %v both render as %q", prev, want, s)
				}
				seen[s] = want
			}
			if want := c.distinct(); len(seen) < want {
				t.Fatalf("only %d distinct keys out of 300 random messages, want %d", len(seen), want)
			}
		})
	}
}

// TestKeyStringInjective renders keys that differ in one field by a little
// (the cases that a careless escaping merges) and checks they stay apart.
func TestKeyStringInjective(t *testing.T) {
	values := []string{"", "a", "a,", ",a", "a=", "=a", "%", "%25", "%2C", "a,name=b", "a%2Cb", "\x00", "\xff", "\u0085", "é", "a b"}
	seen := map[string]string{}
	for _, org := range values {
		for _, name := range values {
			k := &testpb.Top{Key: &testpb.Key{Organization: org, Name: name}}
			s := k.GetKeyString()
			id := fmt.Sprintf("%q/%q", org, name)
			if prev, ok := seen[s]; ok {
				t.Fatalf("%s and %s both render as %q", prev, id, s)
			}
			seen[s] = id
			got, err := testpb.ParseTopKeyString(s)
			if !utf8.ValidString(org) || !utf8.ValidString(name) {
				// Rendered distinctly, but refused: the proto3 key would not marshal.
				if !errors.Is(err, fieldmap.ErrKeyInvalidUTF8) {
					t.Fatalf("ParseTopKeyString(%q) = %v, %v; want ErrKeyInvalidUTF8", s, got, err)
				}
				continue
			}
			if err != nil || got.Organization != org || got.Name != name {
				t.Fatalf("ParseTopKeyString(%q) = %v, %v; want organization %q name %q", s, got, err, org, name)
			}
			if strings.Count(s, ",") != 6 || strings.Count(s, "=") != 7 {
				t.Fatalf("%q: an escaped value holds a separator", s)
			}
		}
	}
}

// FuzzTopKeyString parses any input; whatever parses renders to a string
// that parses to the same key, and renders the same again.
func FuzzTopKeyString(f *testing.F) {
	for _, s := range []string{
		"",
		"organization=acme,name=c1,version=1,state=STATE_ON,sub.region=eu,sub.zone=0,sub.edge=false",
		"state=7,name=%2C",
		"sub.zone=-1,sub.edge=true",
		"name=a,name=b",
		"version=x",
		"name=%zz",
		"name",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		k, err := testpb.ParseTopKeyString(s)
		if err != nil {
			if k != nil || !errors.Is(err, fieldmap.ErrBadKeyString) {
				t.Fatalf("ParseTopKeyString(%q) = %v, %v", s, k, err)
			}
			return
		}
		r := (&testpb.Top{Key: k}).GetKeyString()
		k2, err := testpb.ParseTopKeyString(r)
		if err != nil || !proto.Equal(k, k2) {
			t.Fatalf("ParseTopKeyString(%q) = %v; rendered %q; parsed again %v, %v", s, k, r, k2, err)
		}
		if r2 := (&testpb.Top{Key: k2}).GetKeyString(); r2 != r {
			t.Fatalf("render not stable: %q then %q", r, r2)
		}
	})
}

// TestParseKeyStringUTF8 holds key parsers to what proto.Marshal accepts:
// a string field of proto3 or editions (utf8_validation VERIFY) refuses
// invalid UTF-8, escaped or not; a proto2 string takes any bytes, escaped as
// GetKeyString writes them; a literal invalid byte is never a key string.
func TestParseKeyStringUTF8(t *testing.T) {
	for _, s := range []string{"name=\xff", "name=%FF", "organization=o%C3,name=x"} {
		k, err := edgeproto.ParseCloudletKeyString(s)
		if k != nil || !errors.Is(err, fieldmap.ErrKeyInvalidUTF8) || !errors.Is(err, fieldmap.ErrBadKeyString) {
			t.Errorf("edgeproto.ParseCloudletKeyString(%q) = %v, %v; want ErrKeyInvalidUTF8", s, k, err)
		}
	}
	// torture_ed.proto sets features.utf8_validation = NONE: its strings
	// take any bytes, as proto.Marshal does.
	if k, err := testpb.ParseTortureEditionKeyedKeyString("name=%FF"); err != nil || k.GetName() != "\xff" {
		t.Errorf("editions key without UTF-8 validation: %v, %v; want name \\xff", k, err)
	} else if _, err := proto.Marshal(k); err != nil {
		t.Errorf("parsed editions key does not marshal: %v", err)
	}
	if id, err := testpb.ParseNamedKeyKeyString("%C0%80"); id != "" || !errors.Is(err, fieldmap.ErrKeyInvalidUTF8) {
		t.Errorf("scalar proto3 key: %q, %v; want ErrKeyInvalidUTF8", id, err)
	}

	legacy := &testpb.TortureLegacyKey2{Key: &testpb.TortureLegacyKeyValue{Name: proto.String("a\xffb")}}
	s := legacy.GetKeyString()
	k, err := testpb.ParseTortureLegacyKey2KeyString(s)
	if err != nil || k.GetName() != "a\xffb" {
		t.Fatalf("proto2 key %q: %v, %v; want name %q", s, k, err, "a\xffb")
	}
	if _, err := proto.Marshal(&testpb.TortureLegacyKey2{Key: k}); err != nil {
		t.Errorf("parsed proto2 key does not marshal: %v", err)
	}
	if _, err := testpb.ParseTortureLegacyKey2KeyString("name=a\xffb"); !errors.Is(err, fieldmap.ErrKeyInvalidUTF8) {
		t.Errorf("literal invalid byte in a proto2 key string: %v; want ErrKeyInvalidUTF8", err)
	}
}
