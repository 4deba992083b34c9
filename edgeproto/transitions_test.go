package edgeproto

import (
	"errors"
	"strings"
	"testing"
)

// acceptGrid is the expected transition table, written out by hand: one
// row per object state, one column per Info state, in enum order; "x"
// accepts, "." rejects.
//
// Columns: UN NP CR CG CE RD UR UG UE DR DG DE DP CI CD DD
const acceptGrid = `
UNSPECIFIED           .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .
NOT_PRESENT           .  x  .  .  .  .  .  .  .  .  .  .  .  .  .  .
CREATE_REQUESTED      .  .  .  x  x  x  .  .  .  .  .  .  .  x  x  .
CREATING              .  .  .  x  x  x  .  .  .  .  .  .  .  x  x  .
CREATE_ERROR          .  .  .  .  x  .  .  .  .  .  .  .  .  .  .  .
READY                 .  .  .  .  x  x  .  .  .  .  .  .  .  .  .  .
UPDATE_REQUESTED      .  .  .  .  .  x  .  x  x  .  .  .  .  .  .  .
UPDATING              .  .  .  .  .  x  .  x  x  .  .  .  .  .  .  .
UPDATE_ERROR          .  .  .  .  x  .  .  .  x  .  .  .  .  .  .  .
DELETE_REQUESTED      .  x  .  .  .  .  .  .  .  .  x  x  .  .  .  x
DELETING              .  x  .  .  .  .  .  .  .  .  x  x  .  .  .  x
DELETE_ERROR          .  .  .  .  .  .  .  .  .  .  .  x  .  .  .  .
DELETE_PREPARE        .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .
CRM_INITOK            .  .  .  .  x  x  .  .  .  .  .  .  .  x  .  .
CREATING_DEPENDENCIES .  .  .  x  x  x  .  .  .  .  .  .  .  .  x  .
DELETE_DONE           .  x  .  .  .  .  .  .  .  .  .  .  .  .  .  x
`

func parseAcceptGrid(t *testing.T) map[TrackedState][16]bool {
	t.Helper()
	out := map[TrackedState][16]bool{}
	for line := range strings.Lines(strings.TrimSpace(acceptGrid)) {
		cols := strings.Fields(line)
		if len(cols) != 17 {
			t.Fatalf("grid row %q has %d columns, want 17", line, len(cols))
		}
		v, ok := TrackedState_value["TRACKED_STATE_"+cols[0]]
		if !ok {
			t.Fatalf("grid row names unknown state %q", cols[0])
		}
		var row [16]bool
		for i, c := range cols[1:] {
			switch c {
			case "x":
				row[i] = true
			case ".":
			default:
				t.Fatalf("grid row %q: cell %q is neither x nor .", cols[0], c)
			}
		}
		out[TrackedState(v)] = row
	}
	if len(out) != 16 {
		t.Fatalf("grid has %d rows, want 16", len(out))
	}
	return out
}

func TestAcceptsInfoStateWholeTable(t *testing.T) {
	grid := parseAcceptGrid(t)
	if n := len(TrackedState_name); n != 16 {
		t.Fatalf("TrackedState has %d values, the grid covers 16", n)
	}
	for obj := TrackedState(0); obj < 16; obj++ {
		for info := TrackedState(0); info < 16; info++ {
			want := grid[obj][info]
			if got := AcceptsInfoState(obj, info); got != want {
				t.Errorf("AcceptsInfoState(%s, %s) = %v, want %v", obj, info, got, want)
			}
			err := CheckInfoState(obj, info)
			if (err == nil) != want {
				t.Errorf("CheckInfoState(%s, %s) = %v, want accepted %v", obj, info, err, want)
			}
		}
		var wantList []TrackedState
		for info := TrackedState(0); info < 16; info++ {
			if grid[obj][info] {
				wantList = append(wantList, info)
			}
		}
		got := AcceptedInfoStates(obj)
		if len(got) != len(wantList) {
			t.Errorf("AcceptedInfoStates(%s) = %v, want %v", obj, got, wantList)
			continue
		}
		for i := range got {
			if got[i] != wantList[i] {
				t.Errorf("AcceptedInfoStates(%s) = %v, want %v", obj, got, wantList)
				break
			}
		}
	}
}

func TestAcceptsInfoStateUnknownValues(t *testing.T) {
	for _, c := range []struct{ obj, info TrackedState }{
		{99, TrackedState_TRACKED_STATE_READY},
		{TrackedState_TRACKED_STATE_READY, 99},
		{-1, -1},
	} {
		if AcceptsInfoState(c.obj, c.info) {
			t.Errorf("AcceptsInfoState(%d, %d) = true, want false", c.obj, c.info)
		}
	}
}

func TestAcceptedInfoStatesIsACopy(t *testing.T) {
	got := AcceptedInfoStates(TrackedState_TRACKED_STATE_CREATING)
	for i := range got {
		got[i] = TrackedState_TRACKED_STATE_UNSPECIFIED
	}
	if !AcceptsInfoState(TrackedState_TRACKED_STATE_CREATE_REQUESTED, TrackedState_TRACKED_STATE_READY) {
		t.Fatal("changing the returned slice changed the table")
	}
}

func TestCheckInfoStateError(t *testing.T) {
	err := CheckInfoState(TrackedState_TRACKED_STATE_READY, TrackedState_TRACKED_STATE_DELETING)
	if !errors.Is(err, ErrInfoStateRejected) {
		t.Fatalf("errors.Is(%v, ErrInfoStateRejected) = false", err)
	}
	var te *TransitionError
	if !errors.As(err, &te) || te.Object != TrackedState_TRACKED_STATE_READY || te.Info != TrackedState_TRACKED_STATE_DELETING {
		t.Fatalf("errors.As: got %#v", te)
	}
	const want = "info state not accepted: object in state READY does not accept info state DELETING"
	if err.Error() != want {
		t.Errorf("Error() = %q, want %q", err.Error(), want)
	}
	if got := CheckInfoState(7, 42).Error(); !strings.Contains(got, "UPDATING") || !strings.Contains(got, "42") {
		t.Errorf("Error() of unknown info state = %q, want it to name UPDATING and 42", got)
	}
}
