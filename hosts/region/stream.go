package region

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/edgekit/edgekit/edgeproto"
)

// collect reads a server stream to its end and returns get of each
// response.
func collect[R, T any](s interface{ Recv() (R, error) }, get func(R) T) ([]T, error) {
	var out []T
	for {
		resp, err := s.Recv()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		out = append(out, get(resp))
	}
}

// last returns the last element of xs, or the zero value.
func last[T any](xs []T, err error) (T, error) {
	var zero T
	if err != nil || len(xs) == 0 {
		return zero, err
	}
	return xs[len(xs)-1], nil
}

// progressed is a response of a change's progress stream.
type progressed interface {
	GetProgress() *edgeproto.Progress
}

// follow reads a change's progress stream to its end, handing each step
// to step (when not nil), and fails when the change ended in an error
// state.
func follow[R progressed](s interface{ Recv() (R, error) }, step func(*edgeproto.Progress)) (*edgeproto.Progress, error) {
	var p *edgeproto.Progress
	for {
		resp, err := s.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return p, err
		}
		p = resp.GetProgress()
		if step != nil {
			step(p)
		}
	}
	if p == nil {
		return nil, errors.New("the change ended without a word of progress")
	}
	if strings.HasSuffix(p.GetState().String(), "_ERROR") {
		return p, fmt.Errorf("%s: %s", p.GetState(), strings.Join(p.GetErrors(), "; "))
	}
	return p, nil
}
