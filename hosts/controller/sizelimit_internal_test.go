package controller

import (
	"fmt"
	"strings"
	"testing"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// TestTooLargeMapsOnlyTheSizeRefusals: etcd's "request is too large" and
// its client's send limit become InvalidArgument naming the object;
// anything else, a full disk (NOSPACE, also ResourceExhausted) included,
// is left alone.
func TestTooLargeMapsOnlyTheSizeRefusals(t *testing.T) {
	for _, err := range []error{
		fmt.Errorf("store: txn: %w", rpctypes.ErrRequestTooLarge),
		fmt.Errorf("store: txn: %w", status.Error(codes.ResourceExhausted, "trying to send message larger than max (3000334 vs. 2097152)")),
	} {
		got := tooLarge("App", "organization=o,name=a", err)
		if st, _ := status.FromError(got); st.Code() != codes.InvalidArgument || !strings.Contains(st.Message(), "App organization=o,name=a") ||
			!strings.Contains(st.Message(), "1048576") {
			t.Errorf("%v: got %v", err, got)
		}
	}
	for _, err := range []error{
		fmt.Errorf("store: txn: %w", rpctypes.ErrNoSpace),
		fmt.Errorf("store: txn: %w", rpctypes.ErrGRPCNoSpace),
		fmt.Errorf("store: boom"),
		nil,
	} {
		if got := tooLarge("App", "k", err); got != err {
			t.Errorf("%v: changed to %v", err, got)
		}
	}
}
