package testpb_test

import (
	"math"
	"time"

	"github.com/edgekit/edgekit/internal/testpb"
	otherpb "github.com/edgekit/edgekit/internal/testpb/other"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/structpb"
	"google.golang.org/protobuf/types/known/timestamppb"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// ptr returns a pointer to a copy of v.
func ptr[T any](v T) *T { return &v }

// unknown encodes one varint unknown field.
func unknown(num protowire.Number, v uint64) []byte {
	return protowire.AppendVarint(protowire.AppendTag(nil, num, protowire.VarintType), v)
}

// withUnknown sets the unknown fields of m and returns it.
func withUnknown[M proto.Message](m M, raw ...[]byte) M {
	var b []byte
	for _, r := range raw {
		b = append(b, r...)
	}
	m.ProtoReflect().SetUnknown(b)
	return m
}

// topFixture returns a Top with every field (and every field below it) set,
// the oneof holding a sub-message, and no unknown fields: the message the
// behaviour tests and every benchmark of this package use.
func topFixture() *testpb.Top {
	leaf := func(n string) *testpb.Leaf {
		return &testpb.Leaf{Name: n, Value: 42, State: testpb.State_STATE_ON, Token: "tok-" + n}
	}
	middle := func(n string) *testpb.Middle {
		return &testpb.Middle{Name: n, Leaf: leaf(n + "-leaf"), Leaves: []*testpb.Leaf{leaf(n + "-a"), leaf(n + "-b")}}
	}
	st, err := structpb.NewStruct(map[string]any{"a": 1.5, "b": "two", "c": []any{true, nil}})
	if err != nil {
		panic(err)
	}
	anyv, err := anypb.New(leaf("any"))
	if err != nil {
		panic(err)
	}
	label := func(n string) *otherpb.Label {
		return &otherpb.Label{Name: n, Color: otherpb.Color_COLOR_GREEN, Secret: "s", Weights: []int32{1, 2, 3}}
	}
	return &testpb.Top{
		Key: &testpb.Key{Organization: "org", Name: "name", Version: 3, State: testpb.State_STATE_OFF,
			Sub: &testpb.SubKey{Region: "eu", Zone: 7, Edge: true}},
		Middle:   middle("m"),
		Tags:     []string{"a", "b", "c", "d"},
		Middles:  []*testpb.Middle{middle("m1"), middle("m2"), middle("m3")},
		Labels:   map[string]string{"env": "prod", "tier": "edge", "team": "x"},
		LeafMap:  map[int32]*testpb.Leaf{1: leaf("one"), 2: leaf("two"), 3: leaf("three")},
		Blobs:    [][]byte{[]byte("blob1"), []byte("blob2"), {}},
		Samples:  []float64{1.5, math.NaN(), math.Inf(-1), 0},
		States:   []testpb.State{testpb.State_STATE_ON, testpb.State_STATE_OFF},
		BlobMap:  map[string][]byte{"x": []byte("xx"), "y": []byte("yy")},
		StateMap: map[bool]testpb.State{true: testpb.State_STATE_ON, false: testpb.State_STATE_OFF},
		Choice:   &testpb.Top_ChoiceLeaf{ChoiceLeaf: leaf("choice")},
		Scalars: &testpb.Scalars{FDouble: 1.25, FFloat: 2.5, FInt32: -3, FInt64: -4, FUint32: 5, FUint64: 6,
			FSint32: -7, FSint64: -8, FFixed32: 9, FFixed64: 10, FSfixed32: -11, FSfixed64: -12, FBool: true,
			FString: "héllo", FBytes: []byte{1, 2, 3}, FEnum: testpb.State_STATE_ON},
		Optionals: &testpb.Optionals{ODouble: ptr(1.0), OFloat: ptr(float32(2)), OInt32: ptr(int32(3)),
			OInt64: ptr(int64(4)), OUint32: ptr(uint32(5)), OUint64: ptr(uint64(6)), OBool: ptr(true),
			OString: ptr("s"), OBytes: []byte("b"), OEnum: ptr(testpb.State_STATE_OFF), OMessage: leaf("opt")},
		Wkt: &testpb.Wkt{
			Ts:    timestamppb.New(timestampAt(1700000000)),
			Dur:   durationpb.New(90e9),
			Str:   wrapperspb.String("str"),
			I64:   wrapperspb.Int64(64),
			Flag:  wrapperspb.Bool(true),
			St:    st,
			Any:   anyv,
			Val:   structpb.NewStringValue("val"),
			Times: []*timestamppb.Timestamp{timestamppb.New(timestampAt(1)), timestamppb.New(timestampAt(2))},
			Durs:  map[string]*durationpb.Duration{"a": durationpb.New(1e9), "b": durationpb.New(2e9)},
		},
		Label:       label("l"),
		LabelsOther: []*otherpb.Label{label("l1"), label("l2")},
		Password:    "secret",
		AtomicLeaf:  leaf("atomic"),
		LabelMap:    map[string]*otherpb.Label{"k1": label("k1"), "k2": label("k2")},
		Empty:       &testpb.Empty{},
	}
}

// fullTop is topFixture with unknown fields on the message and on a
// sub-message, for Clone and Equal.
func fullTop() *testpb.Top {
	m := topFixture()
	m.Empty = withUnknown(m.Empty, unknown(5, 1))
	return withUnknown(m, unknown(1000, 1), unknown(1001, 2))
}

// timestampAt is a UTC time sec seconds after the epoch.
func timestampAt(sec int64) time.Time { return time.Unix(sec, 0).UTC() }
