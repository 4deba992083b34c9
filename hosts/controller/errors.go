package controller

import (
	"context"
	"errors"
	"fmt"

	"github.com/edgekit/edgekit/internal/store"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

func invalidf(format string, args ...any) error {
	return status.Errorf(codes.InvalidArgument, format, args...)
}

func preconditionf(format string, args ...any) error {
	return status.Errorf(codes.FailedPrecondition, format, args...)
}

// errDenied is the answer to a call on an object the caller does not own.
// It is the same whether or not the object exists.
func errDenied(kind, key string) error {
	return status.Errorf(codes.PermissionDenied, "not allowed to access %s %s", kind, key)
}

// apiError turns an error of the store (or of a check run inside a store
// transaction) into a gRPC status error. Status errors pass through.
func apiError(err error) error {
	if err == nil {
		return nil
	}
	if _, ok := status.FromError(err); ok {
		return err
	}
	switch {
	case errors.Is(err, store.ErrNotFound):
		return status.Error(codes.NotFound, err.Error())
	case errors.Is(err, store.ErrAlreadyExists):
		return status.Error(codes.AlreadyExists, err.Error())
	case errors.Is(err, store.ErrConflict):
		return status.Error(codes.Aborted, err.Error())
	case errors.Is(err, store.ErrNoSpace):
		return status.Error(codes.ResourceExhausted, err.Error()+
			"; writes are refused until space is freed by deleting objects that are no longer needed (reads and deletes work)")
	case errors.Is(err, context.DeadlineExceeded):
		return status.Error(codes.DeadlineExceeded, err.Error())
	case errors.Is(err, context.Canceled):
		return status.Error(codes.Canceled, err.Error())
	}
	return status.Error(codes.Unavailable, fmt.Sprintf("store: %v", err))
}
