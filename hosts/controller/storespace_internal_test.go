package controller

import (
	"strings"
	"testing"

	"github.com/edgekit/edgekit/internal/store"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// A write the store reports refused under etcd's NOSPACE alarm answers
// ResourceExhausted naming the alarm and how to make room (it answered
// Unavailable).
func TestAPIErrorOfNoSpace(t *testing.T) {
	err := apiError(&store.Error{Op: "create", Kind: "App", Key: "organization=o,name=a", Err: store.ErrNoSpace, Cause: rpctypes.ErrNoSpace})
	st, _ := status.FromError(err)
	if st.Code() != codes.ResourceExhausted {
		t.Fatalf("code %v (%v), want ResourceExhausted", st.Code(), err)
	}
	for _, want := range []string{"NOSPACE", "deleting objects", "reads and deletes work"} {
		if !strings.Contains(st.Message(), want) {
			t.Errorf("%q does not say %q", st.Message(), want)
		}
	}
}

// Only the user API's writes are refused by a full store: reads, watches,
// deletes and the resource managers' reports go through.
func TestFullStoreRefusesOnlyWritesThatAdd(t *testing.T) {
	for method, want := range map[string]bool{
		"/edgeproto.v1.AppService/CreateApp":                    true,
		"/edgeproto.v1.AppInstService/UpdateAppInst":            true,
		"/edgeproto.v1.CloudletService/RotateCloudletAccessKey": true,
		"/edgeproto.v1.AppService/DeleteApp":                    false,
		"/edgeproto.v1.AppInstService/DeleteAppInst":            false,
		"/edgeproto.v1.AppService/ShowApps":                     false,
		"/edgeproto.v1.CloudletService/WatchCloudletInfos":      false,
		"/edgekit.rm.v1.ReportService/Report":                   false,
		"/grpc.health.v1.Health/Check":                          false,
	} {
		if got := refuses(method); got != want {
			t.Errorf("refuses(%s) = %v, want %v", method, got, want)
		}
	}
}
