// Package shapes calls the message helpers of generated CopyInFields with
// several message types, as a generated package does: TestMessageHelpersShareOneShape
// compiles it and reads which generic instances the compiler emits.
package shapes

import (
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/timestamppb"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/edgekit/edgekit/fieldmap"
)

// Holder has fields of three message types.
type Holder struct {
	T  *timestamppb.Timestamp
	D  *durationpb.Duration
	TL []*timestamppb.Timestamp
	DL []*durationpb.Duration
	SL []*wrapperspb.StringValue
	TM map[string]*timestamppb.Timestamp
	DM map[string]*durationpb.Duration
}

// Copy copies every field of src into h, as CopyInFields does with the
// fields flagged.
func (h *Holder) Copy(src *Holder, a fieldmap.Action) (n int) {
	n += fieldmap.CopyMessage(&h.T, src.T, fieldmap.EqualTimestamp, fieldmap.CloneTimestamp)
	n += fieldmap.CopyMessage(&h.D, src.D, fieldmap.EqualDuration, fieldmap.CloneDuration)
	n += fieldmap.CopyMessageList(a, &h.TL, src.TL)
	n += fieldmap.CopyMessageList(a, &h.DL, src.DL)
	n += fieldmap.CopyMessageList(a, &h.SL, src.SL)
	n += fieldmap.CopyMessageMap(a, &h.TM, src.TM)
	n += fieldmap.CopyMessageMap(a, &h.DM, src.DM)
	return n
}
