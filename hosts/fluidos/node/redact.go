package node

import (
	"context"

	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"

	"github.com/edgekit/edgekit/fieldmap"
	"github.com/edgekit/edgekit/fluidos"
)

// showsSecrets are the API methods whose answers keep their secrets: the
// credentials of what this node bought, asked for by name.
var showsSecrets = map[string]bool{
	fluidos.AllocationService_GetCredentials_FullMethodName: true,
}

// redacted is the answer of method as the API sends it: a copy without
// its secrets (the handler's objects may be shared, so they are not
// changed), unless method is one that shows them.
func redacted(method string, resp any) any {
	m, ok := resp.(proto.Message)
	if !ok || showsSecrets[method] || !m.ProtoReflect().IsValid() {
		return resp
	}
	return fieldmap.Redacted(m)
}

// redactUnary and redactStream clear the secrets of every answer of the
// API but those of showsSecrets: solvers, contracts, allocations and the
// rest are shown without credentials, passwords, configuration
// parameters or kubeconfigs, whoever asks.
func redactUnary(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
	resp, err := h(ctx, req)
	if err != nil {
		return resp, err
	}
	return redacted(info.FullMethod, resp), nil
}

func redactStream(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, h grpc.StreamHandler) error {
	return h(srv, redactingStream{ServerStream: ss, method: info.FullMethod})
}

type redactingStream struct {
	grpc.ServerStream
	method string
}

func (s redactingStream) SendMsg(m any) error { return s.ServerStream.SendMsg(redacted(s.method, m)) }
