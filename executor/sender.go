package executor

import (
	"context"

	"github.com/edgekit/edgekit/fieldmap"
)

//go:generate go run go.uber.org/mock/mockgen@v0.6.0 -destination=mocks/sender.go -package=mocks github.com/edgekit/edgekit/executor Sender

// Sender reports the state of one kind of Info object (CloudletInfo,
// ClusterInstInfo, AppInstInfo...) to wherever the host sends it: a cache
// sent back over the notify stream (CRM), a gRPC stream to the controller
// (CCRM), an Allocation status (FLUIDOS node).
//
// Every report is partial: fields names exactly the flags the engine set in
// info, and the receiver applies it with stored.CopyInFields(info, fields).
// A full report sets every flag. The engine never reuses info after Send
// returns, so a Sender may keep it.
type Sender[T any] interface {
	Send(ctx context.Context, info T, fields *fieldmap.FieldMap) error
}

// SenderFunc adapts a function to Sender.
type SenderFunc[T any] func(ctx context.Context, info T, fields *fieldmap.FieldMap) error

var _ Sender[any] = SenderFunc[any](nil)

// Send calls f.
func (f SenderFunc[T]) Send(ctx context.Context, info T, fields *fieldmap.FieldMap) error {
	return f(ctx, info, fields)
}
