package notify

import (
	"errors"
	"hash/fnv"
	"log/slog"
	"sync"

	"github.com/edgekit/edgekit/internal/notify"
	notifyv1 "github.com/edgekit/edgekit/proto/edgekit/notify/v1"
)

// reportWorkers apply a session's reports: in parallel across objects, in
// order for one object (an object's reports always go to the same worker).
type reportWorkers struct {
	s   *session
	chs []chan *notifyv1.Report
	wg  sync.WaitGroup
}

func newReportWorkers(s *session) *reportWorkers {
	w := &reportWorkers{s: s}
	for range s.srv.cfg.ReportWorkers {
		ch := make(chan *notifyv1.Report, 16)
		w.chs = append(w.chs, ch)
		w.wg.Go(func() {
			for r := range ch {
				w.apply(r)
			}
		})
	}
	return w
}

// dispatch hands r to its object's worker; false when the session ended.
func (w *reportWorkers) dispatch(r *notifyv1.Report) bool {
	h := fnv.New32a()
	if info, _, err := notify.InfoOf(r); err == nil {
		_, _ = h.Write([]byte(notify.KindOf(info) + "/" + info.GetKeyString()))
	}
	select {
	case w.chs[h.Sum32()%uint32(len(w.chs))] <- r:
		return true
	case <-w.s.ctx.Done():
		return false
	}
}

func (w *reportWorkers) close() {
	for _, ch := range w.chs {
		close(ch)
	}
	w.wg.Wait()
}

// apply applies one report and queues its acknowledgement.
func (w *reportWorkers) apply(r *notifyv1.Report) {
	s := w.s
	ack := &notifyv1.ReportAck{Seq: r.GetSeq(), Verdict: notifyv1.Verdict_VERDICT_APPLIED}
	info, fm, err := notify.InfoOf(r)
	if err == nil {
		err = s.srv.cfg.Backend.ApplyReport(s.ctx, s.cloudlet, info, fm)
	} else {
		s.log.LogAttrs(s.ctx, slog.LevelWarn, "malformed report refused", slog.Any("error", err))
	}
	switch {
	case err == nil:
	case errors.Is(err, ErrRejected), errors.Is(err, notify.ErrBadMessage):
		ack.Verdict, ack.Reason = notifyv1.Verdict_VERDICT_REJECTED, err.Error()
	default:
		if s.ctx.Err() != nil {
			return // the stream ended: the CRM sends the report again on its next stream
		}
		ack.Verdict, ack.Reason = notifyv1.Verdict_VERDICT_FAILED, err.Error()
	}
	s.srv.metrics.reports.WithLabelValues(verdictLabel(ack.Verdict)).Inc()
	if err := s.q.Put("", &notifyv1.ConnectResponse{Msg: &notifyv1.ConnectResponse_ReportAck{ReportAck: ack}}, false); err != nil {
		s.srv.metrics.queueFull.Inc()
		s.cancel(errQueueFull)
	}
}

func verdictLabel(v notifyv1.Verdict) string {
	switch v {
	case notifyv1.Verdict_VERDICT_APPLIED:
		return "applied"
	case notifyv1.Verdict_VERDICT_REJECTED:
		return "rejected"
	}
	return "failed"
}
