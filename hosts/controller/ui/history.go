package ui

import (
	"slices"
	"time"
)

// Step is one thing an object went through, as reported: a state it
// entered, a progress message of the engine, or an error.
type Step struct {
	// Time is when the controller saw the report.
	Time time.Time `json:"time"`
	// State is the state the object entered; empty for a progress step.
	State string `json:"state,omitempty"`
	// Task is the task a progress message belongs to, when it has one.
	Task string `json:"task,omitempty"`
	// Message is the progress message, or the error.
	Message string `json:"message,omitempty"`
	// Error marks an error (or an error state).
	Error bool `json:"error,omitempty"`
}

// Operation is the history of one change of an object (one request: a
// create, an update, a delete): its steps, oldest first.
type Operation struct {
	// Request is the identity of the request (the object's request_id); 0
	// for reports that answer no request.
	Request int64 `json:"request"`
	// Started is when the first step of the operation was seen.
	Started time.Time `json:"started"`
	// Steps are the steps, oldest first.
	Steps []Step `json:"steps"`
	// Dropped counts the oldest steps dropped to keep the operation within
	// its bound.
	Dropped int `json:"dropped,omitempty"`

	lastState string
	seenMsgs  int
	seenErrs  map[string]bool
}

// Default bounds of a History.
const (
	DefaultHistoryOperations = 8
	DefaultHistorySteps      = 64
)

// History keeps the recent operations of one object, fed from the object
// and its Info reports as they are stored. It is bounded: at most maxOps
// operations (the oldest is dropped when a newer one starts) of at most
// maxSteps steps each (the oldest steps of an operation are dropped and
// counted). It is not safe for concurrent use.
type History struct {
	maxOps, maxSteps int
	ops              []*Operation
}

// NewHistory returns an empty history keeping maxOps operations of
// maxSteps steps; a bound of 0 or less takes its default.
func NewHistory(maxOps, maxSteps int) *History {
	if maxOps <= 0 {
		maxOps = DefaultHistoryOperations
	}
	if maxSteps <= 0 {
		maxSteps = DefaultHistorySteps
	}
	return &History{maxOps: maxOps, maxSteps: maxSteps}
}

// op returns the operation of request, starting it when it is newer than
// every known one; nil for a request older than the newest whose
// operation was dropped. Request 0 (a report that answers no request)
// goes to the newest operation.
func (h *History) op(at time.Time, request int64) *Operation {
	if n := len(h.ops); n > 0 {
		last := h.ops[n-1]
		if request == 0 || request == last.Request {
			return last
		}
		if request < last.Request {
			for _, o := range h.ops {
				if o.Request == request {
					return o
				}
			}
			return nil
		}
	}
	o := &Operation{Request: request, Started: at, seenErrs: map[string]bool{}}
	h.ops = append(h.ops, o)
	if len(h.ops) > h.maxOps {
		h.ops = slices.Delete(h.ops, 0, len(h.ops)-h.maxOps)
	}
	return o
}

func (h *History) add(o *Operation, s Step) {
	if len(o.Steps) >= h.maxSteps {
		o.Steps = slices.Delete(o.Steps, 0, len(o.Steps)-h.maxSteps+1)
		o.Dropped++
	}
	o.Steps = append(o.Steps, s)
}

// errorsOf adds the errors of o not seen before as error steps.
func (h *History) errorsOf(o *Operation, at time.Time, errs []string) {
	for _, e := range errs {
		if e == "" || o.seenErrs[e] {
			continue
		}
		if len(o.seenErrs) < h.maxSteps {
			o.seenErrs[e] = true
		}
		h.add(o, Step{Time: at, Message: e, Error: true})
	}
}

// State records that the object, at request, is in state with errs (the
// errors of its last change): a step when the state changed, and one per
// error not seen before in the operation, before the state they led to.
// isError marks an error state.
func (h *History) State(at time.Time, request int64, state string, isError bool, errs []string) {
	o := h.op(at, request)
	if o == nil {
		return
	}
	h.errorsOf(o, at, errs)
	if state != "" && state != o.lastState {
		o.lastState = state
		h.add(o, Step{Time: at, State: state, Error: isError})
	}
}

// Progress records an Info report on request: msgs are the messages
// reported so far in the operation, oldest first, of which the last
// len(msgs) of total (total may exceed len(msgs) when the report keeps
// only the newest); the messages not seen before become steps, of task.
// errs are the errors the report carries.
func (h *History) Progress(at time.Time, request int64, task string, msgs []string, total int, errs []string) {
	o := h.op(at, request)
	if o == nil {
		return
	}
	if total < len(msgs) {
		total = len(msgs)
	}
	if total < o.seenMsgs { // progress restarted
		o.seenMsgs = 0
	}
	fresh := min(total-o.seenMsgs, len(msgs))
	for _, m := range msgs[len(msgs)-fresh:] {
		h.add(o, Step{Time: at, Task: task, Message: m})
	}
	o.seenMsgs = total
	h.errorsOf(o, at, errs)
}

// Operations returns a copy of the operations, oldest first.
func (h *History) Operations() []Operation {
	out := make([]Operation, len(h.ops))
	for i, o := range h.ops {
		out[i] = Operation{Request: o.Request, Started: o.Started, Steps: slices.Clone(o.Steps), Dropped: o.Dropped}
	}
	return out
}
