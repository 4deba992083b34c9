package apifields_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/fieldmap"
	"github.com/edgekit/edgekit/internal/apifields"
	optionsv1 "github.com/edgekit/edgekit/proto/edgekit/options/v1"
)

type schemer interface{ FieldSchema() *fieldmap.Schema }

// objectMessages returns every message of package edgeproto.v1 with an
// object_key field, and Settings.
func objectMessages(t *testing.T) []protoreflect.MessageType {
	t.Helper()
	var out []protoreflect.MessageType
	protoregistry.GlobalTypes.RangeMessages(func(mt protoreflect.MessageType) bool {
		md := mt.Descriptor()
		if md.ParentFile().Package() != "edgeproto.v1" {
			return true
		}
		if md.FullName() == "edgeproto.v1.Settings" || keyField(md) != nil {
			out = append(out, mt)
		}
		return true
	})
	if len(out) < 10 {
		t.Fatalf("found %d object messages in edgeproto.v1, want at least 10", len(out))
	}
	return out
}

func keyField(md protoreflect.MessageDescriptor) protoreflect.FieldDescriptor {
	fields := md.Fields()
	for i := range fields.Len() {
		fd := fields.Get(i)
		opts, _ := proto.GetExtension(fd.Options(), optionsv1.E_Field).(*optionsv1.FieldOptions)
		if opts.GetObjectKey() {
			return fd
		}
	}
	return nil
}

func TestEveryObjectIsKnownAndEveryListedFlagExists(t *testing.T) {
	t.Parallel()
	for _, mt := range objectMessages(t) {
		name := mt.Descriptor().FullName()
		if !apifields.Known(name) {
			t.Errorf("%s is an object of the API but has no access rules", name)
			continue
		}
		schema := mt.New().Interface().(schemer).FieldSchema()
		for flag, a := range apifields.Default.Rules[name] {
			if _, ok := schema.Lookup(flag); !ok {
				t.Errorf("%s: rule for flag %q (%s), which the message does not have", name, flag, a)
			}
		}
	}
}

func TestKeyAccessIsExactlyTheObjectKey(t *testing.T) {
	t.Parallel()
	for _, mt := range objectMessages(t) {
		md := mt.Descriptor()
		if apifields.Default.Owned[md.FullName()] {
			continue
		}
		key := keyField(md)
		fields := md.Fields()
		for i := range fields.Len() {
			fd := fields.Get(i)
			flag := fmt.Sprint(fd.Number())
			isKey := apifields.Of(md.FullName(), flag) == apifields.Key
			if isKey != (fd == key) {
				t.Errorf("%s.%s: access %s, object key %v", md.FullName(), fd.Name(), apifields.Of(md.FullName(), flag), fd == key)
			}
		}
	}
}

func TestOf(t *testing.T) {
	t.Parallel()
	cases := []struct {
		msg  protoreflect.FullName
		flag string
		want apifields.Access
	}{
		{"edgeproto.v1.Cloudlet", edgeproto.CloudletFieldKey, apifields.Key},
		{"edgeproto.v1.Cloudlet", edgeproto.CloudletFieldKeyName, apifields.Key},
		{"edgeproto.v1.Cloudlet", edgeproto.CloudletFieldState, apifields.Owned},
		{"edgeproto.v1.Cloudlet", edgeproto.CloudletFieldConfigRegion, apifields.Settable},
		{"edgeproto.v1.Cloudlet", edgeproto.CloudletFieldConfigCrmAccessPrivateKey, apifields.Owned},
		{"edgeproto.v1.Cloudlet", edgeproto.CloudletFieldPlatformType, apifields.CreateOnly},
		{"edgeproto.v1.Cloudlet", edgeproto.CloudletFieldLocationLatitude, apifields.Settable},
		{"edgeproto.v1.Cloudlet", edgeproto.CloudletFieldFlavorNames + ":add", apifields.Settable},
		{"edgeproto.v1.Cloudlet", edgeproto.CloudletFieldState + ":add", apifields.Owned},
		{"edgeproto.v1.CloudletInfo", edgeproto.CloudletInfoFieldKeyName, apifields.Owned},
		{"edgeproto.v1.Settings", edgeproto.SettingsFieldMaxConcurrentTasks, apifields.Settable},
		{"edgeproto.v1.AppInst", edgeproto.AppInstFieldCloudletKeyName, apifields.CreateOnly},
		{"edgeproto.v1.AppInst", edgeproto.AppInstFieldPowerState, apifields.Settable},
	}
	for _, c := range cases {
		if got := apifields.Of(c.msg, c.flag); got != c.want {
			t.Errorf("Of(%s, %q) = %s, want %s", c.msg, c.flag, got, c.want)
		}
	}
}

func TestCheckUpdate(t *testing.T) {
	t.Parallel()
	cases := []struct {
		flags    []string
		wantFlag string // "" for no error
		want     apifields.Access
	}{
		{[]string{edgeproto.CloudletFieldLocation, edgeproto.CloudletFieldFlavorNames}, "", 0},
		{[]string{edgeproto.CloudletFieldLocationLatitude, edgeproto.CloudletFieldKeyName}, edgeproto.CloudletFieldKeyName, apifields.Key},
		{[]string{edgeproto.CloudletFieldKey}, edgeproto.CloudletFieldKey, apifields.Key},
		{[]string{edgeproto.CloudletFieldState}, edgeproto.CloudletFieldState, apifields.Owned},
		{[]string{edgeproto.CloudletFieldCrmOnEdge}, edgeproto.CloudletFieldCrmOnEdge, apifields.CreateOnly},
		{[]string{edgeproto.CloudletFieldConfigCrmAccessPrivateKey}, edgeproto.CloudletFieldConfigCrmAccessPrivateKey, apifields.Owned},
		{[]string{edgeproto.CloudletFieldConfigRegion}, "", 0},
	}
	for _, c := range cases {
		fm, err := edgeproto.NewCloudletFieldMap(c.flags...)
		if err != nil {
			t.Fatal(err)
		}
		err = apifields.CheckUpdate(fm)
		if c.wantFlag == "" {
			if err != nil {
				t.Errorf("CheckUpdate(%v) = %v, want nil", c.flags, err)
			}
			continue
		}
		var fe *apifields.FieldError
		if !errors.As(err, &fe) || !errors.Is(err, apifields.ErrNotSettable) {
			t.Errorf("CheckUpdate(%v) = %v, want a *FieldError", c.flags, err)
			continue
		}
		if fe.Flag != c.wantFlag || fe.Access != c.want || !fe.Update {
			t.Errorf("CheckUpdate(%v) = %+v, want flag %s access %s", c.flags, fe, c.wantFlag, c.want)
		}
	}
}

func TestCheckUpdateErrorText(t *testing.T) {
	t.Parallel()
	fm, _ := edgeproto.NewCloudletFieldMap(edgeproto.CloudletFieldPlatformType)
	err := apifields.CheckUpdate(fm)
	const want = "edgeproto.v1.Cloudlet: field platform_type (4) can be set only when the object is created"
	if err == nil || err.Error() != want {
		t.Errorf("error %v, want %q", err, want)
	}
}

func TestCheckUpdateMessageFieldWithOwnedChild(t *testing.T) {
	t.Parallel()
	// The default table: config holds the access key the controller issues.
	fm, _ := edgeproto.NewCloudletFieldMap(edgeproto.CloudletFieldConfig)
	var fe *apifields.FieldError
	if err := apifields.CheckUpdate(fm); !errors.As(err, &fe) || fe.Flag != edgeproto.CloudletFieldConfigCrmAccessPrivateKey || fe.Via != "config" {
		t.Errorf("CheckUpdate(config) = %v, want the error naming config.crm_access_private_key via config", err)
	}
	const want = "edgeproto.v1.Cloudlet: field config.crm_access_private_key (10.7) is set by the controller, not by users; it is below config, which sets it too"
	if err := apifields.CheckUpdate(fm); err == nil || err.Error() != want {
		t.Errorf("error %v, want %q", err, want)
	}

	table := &apifields.Table{Rules: map[protoreflect.FullName]map[string]apifields.Access{
		"edgeproto.v1.Cloudlet": {edgeproto.CloudletFieldLocationLongitude: apifields.Owned},
	}}
	fm, _ = edgeproto.NewCloudletFieldMap(edgeproto.CloudletFieldLocation)
	err := table.CheckUpdate(fm)
	if !errors.As(err, &fe) || fe.Flag != edgeproto.CloudletFieldLocationLongitude || fe.Via != "location" {
		t.Fatalf("CheckUpdate(location) = %v, want an error naming location.longitude via location", err)
	}
	fm, _ = edgeproto.NewCloudletFieldMap(edgeproto.CloudletFieldLocationLatitude)
	if err := table.CheckUpdate(fm); err != nil {
		t.Errorf("CheckUpdate(location.latitude) = %v, want nil", err)
	}
}

func TestCheckUpdateRefusesUnknownMessagesAndMaps(t *testing.T) {
	t.Parallel()
	fm, _ := edgeproto.NewCloudletInfoFieldMap(edgeproto.CloudletInfoFieldState)
	if err := apifields.CheckUpdate(fm); !errors.Is(err, apifields.ErrNotSettable) {
		t.Errorf("CheckUpdate(CloudletInfo state) = %v, want ErrNotSettable", err)
	}
	fm, _ = edgeproto.NewStatusInfoFieldMap(edgeproto.StatusInfoFieldTaskName)
	if err := apifields.CheckUpdate(fm); !errors.Is(err, apifields.ErrNotSettable) {
		t.Errorf("CheckUpdate(StatusInfo) = %v, want ErrNotSettable", err)
	}
	if err := apifields.CheckUpdate(fieldmap.Of("1")); !errors.Is(err, apifields.ErrNotSettable) {
		t.Errorf("CheckUpdate(map without schema) = %v, want ErrNotSettable", err)
	}
	if err := apifields.CheckUpdate(nil); err != nil {
		t.Errorf("CheckUpdate(nil) = %v", err)
	}
}

func TestCheckCreate(t *testing.T) {
	t.Parallel()
	ok := &edgeproto.Cloudlet{
		Key:          &edgeproto.CloudletKey{Organization: "acme", Name: "edge1"},
		PlatformType: "fake",
		Location:     &edgeproto.Location{Latitude: 1},
		EnvVars:      map[string]string{"A": "b"},
	}
	if err := apifields.CheckCreate(ok); err != nil {
		t.Errorf("CheckCreate(clean cloudlet) = %v", err)
	}
	if err := apifields.CheckCreate(&edgeproto.Cloudlet{Config: &edgeproto.PlatformConfig{Region: "r"}}); err != nil {
		t.Errorf("CheckCreate(config.region) = %v", err)
	}
	if err := apifields.CheckCreate(&edgeproto.Cloudlet{Config: &edgeproto.PlatformConfig{CrmAccessPrivateKey: "k"}}); err == nil || !strings.Contains(err.Error(), "config.crm_access_private_key (10.7)") {
		t.Errorf("CheckCreate(config.crm_access_private_key) = %v", err)
	}
	bad := ok.Clone()
	bad.Config = &edgeproto.PlatformConfig{CrmAccessPrivateKey: "k"}
	bad.State = edgeproto.TrackedState_TRACKED_STATE_READY
	var fe *apifields.FieldError
	if err := apifields.CheckCreate(bad); !errors.As(err, &fe) || fe.Flag != edgeproto.CloudletFieldState || fe.Update {
		t.Errorf("CheckCreate(cloudlet with state and config) = %v, want the error naming state (first in field order)", err)
	}
	const want = "edgeproto.v1.Cloudlet: field state (2) is set by the controller, not by users"
	if err := apifields.CheckCreate(bad); err == nil || err.Error() != want {
		t.Errorf("error %v, want %q", err, want)
	}
	if err := apifields.CheckCreate(&edgeproto.AppInstInfo{}); !errors.Is(err, apifields.ErrNotSettable) {
		t.Errorf("CheckCreate(AppInstInfo) = %v, want ErrNotSettable", err)
	}
	table := &apifields.Table{Rules: map[protoreflect.FullName]map[string]apifields.Access{
		"edgeproto.v1.Cloudlet": {edgeproto.CloudletFieldLocationLatitude: apifields.Owned},
	}}
	if err := table.CheckCreate(ok); !errors.As(err, &fe) || fe.Path != "location.latitude" {
		t.Errorf("CheckCreate with an owned nested field = %v, want the error naming location.latitude", err)
	}
}

// request_id identifies the controller's requests: users never set it.
func TestRequestIDIsTheControllers(t *testing.T) {
	t.Parallel()
	for _, obj := range []interface {
		proto.Message
		GetRequestId() int64
	}{
		&edgeproto.Cloudlet{RequestId: 5},
		&edgeproto.ClusterInst{RequestId: 5},
		&edgeproto.AppInst{RequestId: 5},
	} {
		var fe *apifields.FieldError
		if err := apifields.CheckCreate(obj); !errors.As(err, &fe) || !strings.Contains(err.Error(), "request_id") {
			t.Errorf("CheckCreate(%T with request_id) = %v, want an error naming request_id", obj, err)
		}
		name := obj.ProtoReflect().Descriptor().FullName()
		flag := fmt.Sprint(obj.ProtoReflect().Descriptor().Fields().ByName("request_id").Number())
		if got := apifields.Of(name, flag); got != apifields.Owned {
			t.Errorf("%s.request_id is %v, want owned", name, got)
		}
	}
}
