package executor

import (
	"context"
	"sync"

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/fieldmap"
)

// infoSpec names the flags the engine sets in one Info type.
type infoSpec struct {
	kind                           string // kind of the object the Info reports on
	key, state, errors, status     string
	taskNumber, taskName, stepName string
	msgCount, msgs                 string
	// request is the flag of the Info's request_id ("" when the Info has
	// none): see reporter.
	request string
}

func (s *infoSpec) stepFlags() []string { return []string{s.stepName, s.msgCount, s.msgs} }

func (s *infoSpec) taskFlags() []string {
	return []string{s.taskNumber, s.taskName, s.stepName, s.msgCount, s.msgs}
}

// infoObject is an Info type the engine reports: a generated message with
// its field schema.
type infoObject[T any] interface {
	Object[T]
	FieldSchema() *fieldmap.Schema
}

// reporter builds one object's Info through an operation and sends every
// change as a partial report carrying exactly the flags it set. It is the
// Progress handed to the platform: steps arriving from any goroutine are
// serialised with the engine's own reports, and steps arriving after the
// final report are dropped, so a receiver never sees progress after an
// outcome.
//
// Every report also carries the key and, when the object the engine acts
// on has one, its request_id (copied into the Info the reporter starts
// from): the receiver tells by it which request the report answers, and
// refuses a report of an earlier request that arrives late (a report sent
// again after a reconnect, once the next request was accepted). A request
// without an id (0: a host that does not set it) sends no such flag.
type reporter[T infoObject[T]] struct {
	out      *known[T]
	spec     *infoSpec
	statusOf func(T) *edgeproto.StatusInfo // nil when T has no status
	request  string                        // flag of the request id, "" when unset

	mu     sync.Mutex
	info   T
	ctx    context.Context // for progress steps
	closed bool
}

var _ Progress = (*reporter[*edgeproto.ClusterInstInfo])(nil)

// newReporter returns the reporter of the object whose Info starts as info
// (its key and, for a request that has one, its request_id).
func newReporter[T infoObject[T]](out *known[T], spec *infoSpec, info T, statusOf func(T) *edgeproto.StatusInfo) *reporter[T] {
	r := &reporter[T]{out: out, spec: spec, info: info, statusOf: statusOf, ctx: context.Background()}
	if id, ok := any(info).(interface{ GetRequestId() int64 }); ok && spec.request != "" && id.GetRequestId() != 0 {
		r.request = spec.request
	}
	return r
}

// setContext sets the context progress steps are sent with.
func (r *reporter[T]) setContext(ctx context.Context) {
	r.mu.Lock()
	r.ctx = ctx
	r.mu.Unlock()
}

// begin resets the progress, starts task and sends mutate's changes with
// the flags mutate returns and the whole status.
func (r *reporter[T]) begin(ctx context.Context, task string, mutate func(T) []string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	var flags []string
	if r.statusOf != nil {
		st := r.statusOf(r.info)
		st.ResetProgress()
		st.SetTask(task)
		flags = append(flags, r.spec.status)
	}
	return r.sendLocked(ctx, mutate, flags)
}

// task starts the next task of the operation.
func (r *reporter[T]) task(ctx context.Context, name string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed || r.statusOf == nil {
		return nil
	}
	r.statusOf(r.info).SetTask(name)
	return r.sendLocked(ctx, nil, r.spec.taskFlags())
}

// Step implements Progress.
func (r *reporter[T]) Step(msg string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed || r.statusOf == nil || msg == "" {
		return
	}
	r.statusOf(r.info).SetStep(msg)
	_ = r.sendLocked(r.ctx, nil, r.spec.stepFlags())
}

// update sends mutate's changes with the flags mutate returns.
func (r *reporter[T]) update(ctx context.Context, mutate func(T) []string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return nil
	}
	return r.sendLocked(ctx, mutate, nil)
}

// final sends the outcome; nothing is sent after it.
func (r *reporter[T]) final(ctx context.Context, mutate func(T) []string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return nil
	}
	err := r.sendLocked(ctx, mutate, nil)
	r.closed = true
	return err
}

// close drops every later report without sending one.
func (r *reporter[T]) close() {
	r.mu.Lock()
	r.closed = true
	r.mu.Unlock()
}

// sendLocked runs mutate on the Info (under the lock) and sends the flags
// it returns, with flags. A report that fails after the retries of
// Config.ReportRetry is not dropped: its flags go out again with the
// object's next report (see known), and the error is returned.
func (r *reporter[T]) sendLocked(ctx context.Context, mutate func(T) []string, flags []string) error {
	if mutate != nil {
		flags = append(flags, mutate(r.info)...)
	}
	if r.request != "" {
		flags = append(flags, r.request)
	}
	return r.out.send(ctx, r.info, fieldsOf(r.info.FieldSchema(), r.spec.key, flags))
}

// fieldsOf builds the field map of a report: the key and flags.
func fieldsOf(schema *fieldmap.Schema, key string, flags []string) *fieldmap.FieldMap {
	fm := schema.NewFieldMap()
	fm.Set(key)
	fm.Set(flags...)
	return fm
}
