package notify

import (
	"fmt"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"
)

// BusyError is the status the controller ends a stream with when it is
// synchronising as many CRMs as it admits at once and as many wait: the
// CRM connects again after retryAfter (a RetryInfo detail), not sooner.
func BusyError(reason string, retryAfter time.Duration) error {
	st := status.New(codes.Unavailable, fmt.Sprintf("%s; connect again in %v", reason, retryAfter.Round(time.Millisecond)))
	if d, err := st.WithDetails(&errdetails.RetryInfo{RetryDelay: durationpb.New(retryAfter)}); err == nil {
		st = d
	}
	return st.Err()
}

// RetryAfter returns the pause a stream's status asks for (its RetryInfo
// detail); false when it asks for none.
func RetryAfter(err error) (time.Duration, bool) {
	st, ok := status.FromError(err)
	if !ok || err == nil {
		return 0, false
	}
	for _, d := range st.Details() {
		if ri, ok := d.(*errdetails.RetryInfo); ok && ri.GetRetryDelay().IsValid() && ri.GetRetryDelay().AsDuration() > 0 {
			return ri.GetRetryDelay().AsDuration(), true
		}
	}
	return 0, false
}
