package notify

import (
	"errors"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

func TestBusyErrorCarriesWhenToComeBack(t *testing.T) {
	err := BusyError("busy", 1500*time.Millisecond)
	if status.Code(err) != codes.Unavailable {
		t.Fatalf("code %v, want Unavailable", status.Code(err))
	}
	if d, ok := RetryAfter(err); !ok || d != 1500*time.Millisecond {
		t.Fatalf("RetryAfter = %v, %v; want 1.5s", d, ok)
	}
	for _, err := range []error{nil, errors.New("plain"), status.Error(codes.Unavailable, "no hint")} {
		if d, ok := RetryAfter(err); ok {
			t.Errorf("RetryAfter(%v) = %v, want none", err, d)
		}
	}
}
