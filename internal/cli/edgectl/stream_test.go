package edgectl_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"google.golang.org/grpc"

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/hosts/controller/controllertest"
	"github.com/edgekit/edgekit/internal/cli/clitest"
	"github.com/edgekit/edgekit/internal/cli/edgectl"
	"github.com/edgekit/edgekit/internal/store"
)

// endWatch marks ended when a stream's RecvMsg reports the end of the
// stream.
type endWatch struct {
	grpc.ClientStream
	ended *atomic.Bool
}

func (s *endWatch) RecvMsg(m any) error {
	err := s.ClientStream.RecvMsg(m)
	if err == io.EOF {
		s.ended.Store(true)
	}
	return err
}

// firstWrite records whether its first write came before the stream
// ended.
type firstWrite struct {
	clitest.Buffer
	ended     *atomic.Bool
	once      sync.Once
	beforeEnd bool
}

func (w *firstWrite) Write(p []byte) (int, error) {
	w.once.Do(func() { w.beforeEnd = !w.ended.Load() })
	return w.Buffer.Write(p)
}

// edgectl show prints the objects of a long answer from a real controller
// while the answer still arrives: the first write to stdout comes before
// the client reads the end of the stream, in every format, and the whole
// answer is printed in the end.
func TestShowPrintsWhileTheAnswerArrives(t *testing.T) {
	t.Parallel()
	env := controllertest.Start(t, controllertest.Options{})
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	const n = 350 // more than three pages of a table
	k := store.NewKind[*edgeproto.AppInst](env.Store)
	for lo := 0; lo < n; lo += 50 {
		if _, err := env.Store.Txn(ctx, func(tx *store.Tx) error {
			for i := lo; i < lo+50; i++ {
				if err := k.TxPut(tx, &edgeproto.AppInst{
					Key:         &edgeproto.AppInstKey{Organization: "dev", Name: fmt.Sprintf("inst%04d", i)},
					AppKey:      &edgeproto.AppKey{Organization: "dev", Name: "web", Version: "1"},
					CloudletKey: &edgeproto.CloudletKey{Organization: "op", Name: "site1"},
					State:       edgeproto.TrackedState_TRACKED_STATE_READY,
				}); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	for _, format := range []string{"table", "json", "yaml"} {
		t.Run(format, func(t *testing.T) {
			var ended atomic.Bool
			watch := grpc.WithStreamInterceptor(func(ctx context.Context, desc *grpc.StreamDesc, cc *grpc.ClientConn, method string, streamer grpc.Streamer, opts ...grpc.CallOption) (grpc.ClientStream, error) {
				s, err := streamer(ctx, desc, cc, method, opts...)
				if err != nil {
					return nil, err
				}
				return &endWatch{ClientStream: s, ended: &ended}, nil
			})
			out := &firstWrite{ended: &ended}
			var errOut syncBuffer
			code := edgectl.Execute(ctx, edgectl.Options{
				In: strings.NewReader(""), Out: out, ErrOut: &errOut, Getenv: newEnv(t).getenv,
				DialOptions: []grpc.DialOption{watch},
			}, []string{"--addr", env.Addr, "--insecure", "--token", env.AdminToken(), "show", "appinsts", "-o", format})
			if code != 0 {
				t.Fatalf("exit code %d: %s", code, errOut.String())
			}
			if !ended.Load() {
				t.Fatal("the stream's end was never seen")
			}
			if !out.beforeEnd {
				t.Error("edgectl printed nothing before the whole answer had arrived")
			}
			got := 0
			switch format {
			case "table":
				got = strings.Count(out.String(), " inst0")
				if bad := clitest.Misaligned(out.String(), "ORGANIZATION"); bad != "" {
					t.Errorf("table out of line: %s", bad)
				}
			case "json":
				var list []map[string]any
				if err := json.Unmarshal([]byte(out.String()), &list); err != nil {
					t.Fatalf("output is not a JSON list: %v", err)
				}
				got = len(list)
			case "yaml":
				got = strings.Count(out.String(), "\n- ") + strings.Count(out.String()[:2], "- ")
			}
			if got != n {
				t.Errorf("printed %d AppInsts, want %d", got, n)
			}
		})
	}
}
