package allocator

import (
	"context"
	"net"
	"time"
)

// checkHealth converges the platform with the store (the engine reports
// what runs: a service whose process died is listed without its pid, a
// cluster gone is created again) and wakes every allocation that has not
// ended, whose worker checks it (and restarts an unhealthy service). It
// waits for a moment when no allocation is being worked on and no
// operation runs: a listing taken while one runs would be acted on once
// it is stale.
func (a *Allocator) checkHealth(ctx context.Context) {
	a.mu.Lock()
	busy := len(a.inflight) > 0
	for _, w := range a.workers {
		busy = busy || w.busy
	}
	a.mu.Unlock()
	if busy {
		return
	}
	a.reconcile(ctx)
	a.resume(ctx)
}

// TCPProbe checks that something accepts TCP connections at endpoint
// (host:port) within a second: an Allocator's Probe for services reached
// over TCP.
func TCPProbe(ctx context.Context, endpoint string) error {
	d := net.Dialer{Timeout: time.Second}
	c, err := d.DialContext(ctx, "tcp", endpoint)
	if err != nil {
		return err
	}
	return c.Close()
}
