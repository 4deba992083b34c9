package controllertest

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/executor"
	"github.com/edgekit/edgekit/hosts/ccrm"
	"github.com/edgekit/edgekit/internal/store"
	rmv1 "github.com/edgekit/edgekit/proto/edgekit/rm/v1"
)

// Host plays the resource manager of every cloudlet without crm_on_edge in
// tests: one CCRM replica (hosts/ccrm) whose every cloudlet runs on the
// given platform, reporting to the controller's ReportService under its
// claims.
type Host struct {
	r *ccrm.Replica

	mu       sync.Mutex
	rejected []string // reports the controller judged and did not apply
}

// NewHost returns a host that reads objects from st and reports to
// reports; platform does the work of every cloudlet.
func NewHost(st *store.Store, reports rmv1.ReportServiceClient, platform executor.Platform, log *slog.Logger) (*Host, error) {
	h := &Host{}
	r, err := ccrm.New(ccrm.Config{
		Store: st, Reports: reports, ReplicaID: "test-host", Logger: log,
		NewPlatform:  func(*edgeproto.Cloudlet) (executor.Platform, error) { return platform, nil },
		LeaseTTL:     10 * time.Second,
		DrainTimeout: time.Second,
		GCInterval:   -1,
		// The controller's tests place objects on their platform as they
		// need: no reconciliation removes any of them.
		ReconcileInterval: -1,
		OnReportRejected: func(kind, key, reason string) {
			h.mu.Lock()
			defer h.mu.Unlock()
			h.rejected = append(h.rejected, kind+" "+key+": "+reason)
		},
	})
	if err != nil {
		return nil, err
	}
	h.r = r
	return h, nil
}

// Rejected returns the reasons of the reports the controller did not
// apply.
func (h *Host) Rejected() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.rejected...)
}

// Replica returns the host's CCRM replica.
func (h *Host) Replica() *ccrm.Replica { return h.r }

// Start runs the host until ctx ends.
func (h *Host) Start(ctx context.Context) error { return h.r.Start(ctx) }
