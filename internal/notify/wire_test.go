package notify

import (
	"errors"
	"slices"
	"testing"

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/fieldmap"
	notifyv1 "github.com/edgekit/edgekit/proto/edgekit/notify/v1"
	"google.golang.org/protobuf/proto"
)

func TestUpdateRoundTrip(t *testing.T) {
	t.Parallel()
	for _, obj := range []proto.Message{
		&edgeproto.Settings{MaxConcurrentTasks: 3},
		&edgeproto.Flavor{Key: &edgeproto.FlavorKey{Name: "f"}},
		&edgeproto.Cloudlet{Key: &edgeproto.CloudletKey{Organization: "o", Name: "c"}},
		&edgeproto.TrustPolicy{Key: &edgeproto.TrustPolicyKey{Organization: "o", Name: "p"}},
		&edgeproto.App{Key: &edgeproto.AppKey{Organization: "d", Name: "a", Version: "1"}},
		&edgeproto.ClusterInst{Key: &edgeproto.ClusterKey{Organization: "d", Name: "k"}},
		&edgeproto.AppInst{Key: &edgeproto.AppInstKey{Organization: "d", Name: "i"}},
	} {
		u, err := UpdateOf(notifyv1.UpdateAction_UPDATE_ACTION_PUT, 7, obj)
		if err != nil {
			t.Fatalf("%T: %v", obj, err)
		}
		b, err := proto.Marshal(u)
		if err != nil {
			t.Fatal(err)
		}
		var back notifyv1.Update
		if err := proto.Unmarshal(b, &back); err != nil {
			t.Fatal(err)
		}
		got, err := ObjectOf(&back)
		if err != nil || !proto.Equal(got, obj) || back.Revision != 7 {
			t.Fatalf("%T: round trip gave %v (rev %d), %v", obj, got, back.Revision, err)
		}
	}
	if _, err := UpdateOf(notifyv1.UpdateAction_UPDATE_ACTION_PUT, 1, &edgeproto.CloudletInfo{}); !errors.Is(err, ErrBadMessage) {
		t.Fatalf("UpdateOf(CloudletInfo): %v, want ErrBadMessage", err)
	}
	if _, err := ObjectOf(&notifyv1.Update{}); !errors.Is(err, ErrBadMessage) {
		t.Fatalf("ObjectOf(empty): %v, want ErrBadMessage", err)
	}
}

func TestEncodeFieldsKeepsListActions(t *testing.T) {
	t.Parallel()
	schema := (&edgeproto.Cloudlet{}).FieldSchema()
	fm := schema.NewFieldMap()
	fm.Set(edgeproto.CloudletFieldKey)
	fm.SetAction(edgeproto.CloudletFieldFlavorNames, fieldmap.Remove)
	enc := EncodeFields(fm)
	if !slices.Contains(enc, edgeproto.CloudletFieldFlavorNames+":remove") {
		t.Fatalf("EncodeFields = %q: the list action is lost", enc)
	}
	back, err := schema.Parse(enc...)
	if err != nil || back.ListAction(edgeproto.CloudletFieldFlavorNames) != fieldmap.Remove {
		t.Fatalf("Parse(EncodeFields) = %v, %v", back, err)
	}
}

func TestReportRoundTripKeepsFlags(t *testing.T) {
	t.Parallel()
	info := &edgeproto.AppInstInfo{Key: &edgeproto.AppInstKey{Organization: "d", Name: "i"},
		State: edgeproto.TrackedState_TRACKED_STATE_READY, Errors: []string{"x"}}
	fm := info.FieldSchema().NewFieldMap()
	fm.Set(edgeproto.AppInstInfoFieldKey, edgeproto.AppInstInfoFieldState, edgeproto.AppInstInfoFieldErrors)
	r, err := ReportOf(9, info, fm)
	if err != nil {
		t.Fatal(err)
	}
	got, gfm, err := InfoOf(r)
	if err != nil || !proto.Equal(got, info) || gfm.String() != fm.String() {
		t.Fatalf("InfoOf = %v %v %v", got, gfm, err)
	}
	r.Fields = append(r.Fields, "99")
	if _, _, err := InfoOf(r); !errors.Is(err, ErrBadMessage) {
		t.Fatalf("unknown flag: %v, want ErrBadMessage", err)
	}
	if _, _, err := InfoOf(&notifyv1.Report{}); !errors.Is(err, ErrBadMessage) {
		t.Fatalf("no Info: %v, want ErrBadMessage", err)
	}
}
