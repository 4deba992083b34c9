package ui_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/edgekit/edgekit/hosts/controller/ui"
)

// steps renders an operation's steps as "state" or "task: message" (with
// a leading "!" for an error), in order.
func steps(op ui.Operation) string {
	var out []string
	for _, s := range op.Steps {
		x := s.State
		if x == "" {
			x = s.Message
		}
		if s.Error {
			x = "!" + x
		}
		out = append(out, x)
	}
	return strings.Join(out, ", ")
}

// A history lists each request's states and progress messages in the
// order they were reported, once each, errors marked; a report on an
// older request adds nothing to the newer operation.
func TestHistoryListsStepsInOrder(t *testing.T) {
	h := ui.NewHistory(0, 0)
	at := time.Unix(1000, 0)
	h.State(at, 5, "CREATE_REQUESTED", false, nil)
	h.Progress(at, 5, "Creating", []string{"Creating"}, 1, nil)
	h.State(at, 5, "CREATING", false, nil)
	h.Progress(at, 5, "Creating", []string{"Creating", "Reserving port range"}, 2, nil)
	h.Progress(at, 5, "Creating", []string{"Creating", "Reserving port range"}, 2, nil) // the same report again
	h.State(at, 5, "READY", false, nil)
	h.State(at, 9, "UPDATE_REQUESTED", false, nil)
	h.Progress(at, 5, "Creating", []string{"Creating", "Reserving port range", "late"}, 3, nil) // the old request's
	h.Progress(at, 9, "Updating", []string{"Updating"}, 1, []string{"quota exceeded"})
	h.State(at, 9, "UPDATE_ERROR", true, []string{"quota exceeded"})

	ops := h.Operations()
	if len(ops) != 2 || ops[0].Request != 5 || ops[1].Request != 9 {
		t.Fatalf("operations %+v, want requests 5 then 9", ops)
	}
	if got, want := steps(ops[0]), "CREATE_REQUESTED, Creating, CREATING, Reserving port range, READY, late"; got != want {
		t.Errorf("create's steps: %s\nwant:          %s", got, want)
	}
	if got, want := steps(ops[1]), "UPDATE_REQUESTED, Updating, !quota exceeded, !UPDATE_ERROR"; got != want {
		t.Errorf("update's steps: %s\nwant:          %s", got, want)
	}
}

// A history keeps at most its bound of operations (the newest) and of
// steps per operation (the newest, counting the dropped ones).
func TestHistoryIsBounded(t *testing.T) {
	h := ui.NewHistory(3, 4)
	at := time.Unix(1000, 0)
	for req := int64(1); req <= 10; req++ {
		var msgs []string
		for i := range 10 {
			msgs = append(msgs, fmt.Sprintf("r%d m%d", req, i))
			h.Progress(at, req, "", msgs, len(msgs), nil)
		}
	}
	ops := h.Operations()
	if len(ops) != 3 || ops[0].Request != 8 || ops[2].Request != 10 {
		t.Fatalf("operations %+v, want the newest 3 (8, 9, 10)", ops)
	}
	for _, op := range ops {
		if len(op.Steps) != 4 || op.Dropped != 6 {
			t.Errorf("request %d: %d steps, %d dropped; want 4 and 6", op.Request, len(op.Steps), op.Dropped)
		}
	}
	if got, want := steps(ops[2]), "r10 m6, r10 m7, r10 m8, r10 m9"; got != want {
		t.Errorf("kept %s, want %s", got, want)
	}
	// A report keeping only its newest messages: the ones not seen yet.
	h2 := ui.NewHistory(0, 0)
	h2.Progress(at, 1, "", []string{"a", "b"}, 2, nil)
	h2.Progress(at, 1, "", []string{"c", "d", "e"}, 5, nil)
	if got, want := steps(h2.Operations()[0]), "a, b, c, d, e"; got != want {
		t.Errorf("steps %s, want %s", got, want)
	}
}
