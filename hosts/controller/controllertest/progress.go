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
	rs, err := Collect(s, err)
	out := make([]*edgeproto.Progress, len(rs))
	for i, r := range rs {
		out[i] = r.GetProgress()
	}
	return out, err
}

// Collect reads a server stream (a Show, a progress stream) to its end and
// returns its responses and the call's error (with the responses read
// before it):
//
//	rs, err := controllertest.Collect(cli.ShowCloudlets(ctx, req))
func Collect[R any](s interface{ Recv() (R, error) }, err error) ([]R, error) {
	if err != nil {
		return nil, err
	}
	var out []R
	for {
		r, err := s.Recv()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		out = append(out, r)
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
