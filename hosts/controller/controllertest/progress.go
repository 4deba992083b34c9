package controllertest

import (
	"errors"
	"io"

	"github.com/edgekit/edgekit/edgeproto"
)

// Drain reads a Create/Update/Delete progress stream to its end and
// returns its progress messages and the call's error:
//
//	ps, err := controllertest.Drain(cli.CreateAppInst(ctx, req))
func Drain[R any, P interface {
	*R
	GetProgress() *edgeproto.Progress
}](s interface{ Recv() (P, error) }, err error) ([]*edgeproto.Progress, error) {
	if err != nil {
		return nil, err
	}
	var out []*edgeproto.Progress
	for {
		r, err := s.Recv()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		out = append(out, r.GetProgress())
	}
}

// Final returns the state of the last progress message when it is final,
// else UNSPECIFIED.
func Final(ps []*edgeproto.Progress) edgeproto.TrackedState {
	if len(ps) == 0 || !ps[len(ps)-1].GetFinal() {
		return edgeproto.TrackedState_TRACKED_STATE_UNSPECIFIED
	}
	return ps[len(ps)-1].GetState()
}
