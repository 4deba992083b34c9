package crm_test

import (
	"context"
	"testing"

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/internal/notify"
	notifyv1 "github.com/edgekit/edgekit/proto/edgekit/notify/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/proto"
)

type rawStream = grpc.BidiStreamingClient[notifyv1.ConnectRequest, notifyv1.ConnectResponse]

// rawConnect opens a notify stream as the CRM of cloudlet would, sending
// the Hello; the stream ends in t.Cleanup.
func (e *edge) rawConnect(t testing.TB, cloudlet *edgeproto.CloudletKey, key string, opts ...grpc.DialOption) rawStream {
	t.Helper()
	return e.rawConnectHello(t, &notifyv1.Hello{CloudletKey: cloudlet, AccessKey: key, Instance: t.Name()}, opts...)
}

// rawConnectHello opens a notify stream sending hello.
func (e *edge) rawConnectHello(t testing.TB, hello *notifyv1.Hello, opts ...grpc.DialOption) rawStream {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	conn, err := grpc.NewClient(e.env.Addr, append([]grpc.DialOption{grpc.WithTransportCredentials(insecure.NewCredentials())}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	st, err := notifyv1.NewNotifyServiceClient(conn).Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Send(&notifyv1.ConnectRequest{Msg: &notifyv1.ConnectRequest_Hello{Hello: hello}}); err != nil {
		t.Fatal(err)
	}
	return st
}

// readUntil reads objects from st until stop says so, and returns them by
// "<Kind>/<key>" (deleted ones as nil).
func readUntil(t testing.TB, st rawStream, stop func(*notifyv1.ConnectResponse) bool) map[string]proto.Message {
	t.Helper()
	got := map[string]proto.Message{}
	for {
		m, err := st.Recv()
		if err != nil {
			t.Fatalf("notify stream: %v", err)
		}
		if u := m.GetUpdate(); u != nil {
			obj, err := notify.ObjectOf(u)
			if err != nil {
				t.Fatal(err)
			}
			id := notify.KindOf(obj) + "/" + keyString(obj)
			if u.GetAction() == notifyv1.UpdateAction_UPDATE_ACTION_DELETE {
				got[id] = nil
			} else {
				got[id] = obj
			}
		}
		if stop(m) {
			return got
		}
	}
}

func keyString(m proto.Message) string {
	if k, ok := m.(interface{ GetKeyString() string }); ok {
		return k.GetKeyString()
	}
	return ""
}

func isSyncEnd(m *notifyv1.ConnectResponse) bool { return m.GetSyncEnd() != nil }
