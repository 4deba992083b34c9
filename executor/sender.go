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
//
// An error says the report was not delivered. The engine tries it again
// (Config.ReportRetry, with back-off, ending early with ctx); a report
// that still fails is not dropped: its flags travel again with the
// object's next report, and a final report that fails makes the request's
// Handle fail with ErrReportFailed (see Engine.Resend). So a receiver may
// get a report more than once and must apply reports idempotently, as
// CopyInFields does. Send is never called concurrently for one object.
// An error wrapping ErrReportRejected says the receiver refused the report
// for good: it is not retried and the engine forgets the object.
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
