package ccrm_test

import (
	"context"
	"strings"
	"sync"

	rmv1 "github.com/edgekit/edgekit/proto/edgekit/rm/v1"
	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/grpc"
)

// reportOracle watches the controller's ReportService independently of its
// fencing: before a report is handled it reads the claim the report names;
// a report whose claim was already gone or replaced then, and which the
// controller applied anyway, is a stale report applied. (Claims only move
// forward: a claim key's create revision, once gone, never comes back.)
type reportOracle struct {
	cli *clientv3.Client

	mu                                         sync.Mutex
	total, applied, staleApplied, staleRefused int
	unfenced                                   int
}

func (o *reportOracle) interceptor() grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
		r, ok := req.(*rmv1.ReportInfoRequest)
		if !ok || info.FullMethod != rmv1.ReportService_ReportInfo_FullMethodName {
			return handler(ctx, req)
		}
		f := r.GetFence()
		current := false
		if f != nil {
			if resp, err := o.cli.Get(ctx, f.GetKey()); err == nil && len(resp.Kvs) == 1 && resp.Kvs[0].CreateRevision == f.GetRevision() {
				current = true
			}
		}
		out, err := handler(ctx, req)
		resp, _ := out.(*rmv1.ReportInfoResponse)
		o.mu.Lock()
		defer o.mu.Unlock()
		o.total++
		if f == nil {
			o.unfenced++
		}
		switch {
		case err == nil && resp.GetApplied():
			o.applied++
			if !current {
				o.staleApplied++
			}
		case err == nil && strings.Contains(resp.GetReason(), "no longer at revision"):
			o.staleRefused++
		}
		return out, err
	}
}

func (o *reportOracle) counts() (total, applied, staleApplied, staleRefused, unfenced int) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.total, o.applied, o.staleApplied, o.staleRefused, o.unfenced
}
