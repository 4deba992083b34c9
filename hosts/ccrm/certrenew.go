package ccrm

import (
	"context"
	"log/slog"
	"sync/atomic"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/edgekit/edgekit/hosts/controller"
	"github.com/edgekit/edgekit/internal/devtls"
)

// followCertRenewals applies the controller's renewal requests to r until
// ctx ends: the request current when the replica connects (a replica that
// was away when it was made renews now), then each new one. asked counts
// the requests that replaced the certificate.
func followCertRenewals(ctx context.Context, cli *clientv3.Client, region string, r *devtls.Renewer, asked *atomic.Int64, log *slog.Logger) {
	key := controller.CertRenewalKey(region)
	apply := func(v []byte) {
		req, err := controller.ParseCertRenewal(v)
		if err != nil {
			log.Warn("ignoring the controller's certificate renewal request", slog.Any("err", err))
			return
		}
		changed, err := r.RenewExpiringBefore(req.ExpiringBefore)
		if err != nil {
			// The schedule of r renews later, or the next request.
			log.Warn("renewing the certificate as the controller asked", slog.Time("expiring_before", req.ExpiringBefore), slog.Any("err", err))
			return
		}
		if changed {
			asked.Add(1)
			log.Info("certificate renewed as the controller asked", slog.Time("not_after", r.Current().Leaf.NotAfter))
		}
	}
	for retry := time.Duration(0); ; retry = min(max(2*retry, 100*time.Millisecond), 10*time.Second) {
		if retry > 0 {
			t := time.NewTimer(retry)
			select {
			case <-ctx.Done():
				t.Stop()
				return
			case <-t.C:
			}
		}
		if ctx.Err() != nil {
			return
		}
		gctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		resp, err := cli.Get(gctx, key)
		cancel()
		if err != nil {
			if ctx.Err() == nil {
				log.Warn("reading the controller's certificate renewal request", slog.Any("err", err))
			}
			continue
		}
		if len(resp.Kvs) > 0 {
			apply(resp.Kvs[0].Value)
		}
		wctx, wcancel := context.WithCancel(clientv3.WithRequireLeader(ctx))
		for wr := range cli.Watch(wctx, key, clientv3.WithRev(resp.Header.Revision+1)) {
			if wr.Err() != nil {
				break
			}
			for _, ev := range wr.Events {
				if ev.Type == clientv3.EventTypePut {
					apply(ev.Kv.Value)
				}
			}
			retry = 0
		}
		wcancel()
	}
}
