package edgeproto

import "slices"

// The transition table says which TrackedState an engine may report in an
// object's Info twin, given the state of the object the controller holds.
// The controller applies an accepted Info state to the object and drops the
// others. The rules:
//
//   - an engine never reports UNSPECIFIED, a *_REQUESTED state or
//     DELETE_PREPARE: those are the controller's and are never accepted;
//   - a *_REQUESTED object, and an object in the *ING state of the same
//     change, accept the progress and the outcomes of that change:
//     create: CREATING, CREATING_DEPENDENCIES, CRM_INITOK, READY, CREATE_ERROR;
//     update: UPDATING, READY, UPDATE_ERROR;
//     delete: DELETING, DELETE_DONE, DELETE_ERROR, NOT_PRESENT (the engine
//     found nothing to delete);
//   - CREATING_DEPENDENCIES accepts CREATING_DEPENDENCIES, CREATING, READY
//     and CREATE_ERROR; CRM_INITOK accepts CRM_INITOK, READY and CREATE_ERROR;
//   - a settled object (READY, NOT_PRESENT, an *_ERROR state) accepts its
//     own state, which an engine re-sends when it reconnects; DELETE_DONE
//     also accepts NOT_PRESENT; READY and UPDATE_ERROR also accept
//     CREATE_ERROR, the outcome of an engine's reconciliation that found
//     the object missing on the platform and failed to create it again
//     (a create ends READY or CREATE_ERROR, never both, so no stale
//     report of an earlier create can be a CREATE_ERROR after a READY).
//     The CREATING of such a recreate is refused: it cannot be told from
//     a late copy of the first create's, which must not take a READY
//     object back; the recreate's READY is accepted as a re-send;
//   - UNSPECIFIED and DELETE_PREPARE objects accept nothing.
var acceptedInfoStates = map[TrackedState][]TrackedState{
	TrackedState_TRACKED_STATE_NOT_PRESENT: {
		TrackedState_TRACKED_STATE_NOT_PRESENT,
	},
	TrackedState_TRACKED_STATE_CREATE_REQUESTED: createProgress,
	TrackedState_TRACKED_STATE_CREATING:         createProgress,
	TrackedState_TRACKED_STATE_CREATING_DEPENDENCIES: {
		TrackedState_TRACKED_STATE_CREATING_DEPENDENCIES,
		TrackedState_TRACKED_STATE_CREATING,
		TrackedState_TRACKED_STATE_READY,
		TrackedState_TRACKED_STATE_CREATE_ERROR,
	},
	TrackedState_TRACKED_STATE_CRM_INITOK: {
		TrackedState_TRACKED_STATE_CRM_INITOK,
		TrackedState_TRACKED_STATE_READY,
		TrackedState_TRACKED_STATE_CREATE_ERROR,
	},
	TrackedState_TRACKED_STATE_CREATE_ERROR: {
		TrackedState_TRACKED_STATE_CREATE_ERROR,
	},
	TrackedState_TRACKED_STATE_READY: {
		TrackedState_TRACKED_STATE_READY,
		TrackedState_TRACKED_STATE_CREATE_ERROR,
	},
	TrackedState_TRACKED_STATE_UPDATE_REQUESTED: updateProgress,
	TrackedState_TRACKED_STATE_UPDATING:         updateProgress,
	TrackedState_TRACKED_STATE_UPDATE_ERROR: {
		TrackedState_TRACKED_STATE_UPDATE_ERROR,
		TrackedState_TRACKED_STATE_CREATE_ERROR,
	},
	TrackedState_TRACKED_STATE_DELETE_REQUESTED: deleteProgress,
	TrackedState_TRACKED_STATE_DELETING:         deleteProgress,
	TrackedState_TRACKED_STATE_DELETE_ERROR: {
		TrackedState_TRACKED_STATE_DELETE_ERROR,
	},
	TrackedState_TRACKED_STATE_DELETE_DONE: {
		TrackedState_TRACKED_STATE_DELETE_DONE,
		TrackedState_TRACKED_STATE_NOT_PRESENT,
	},
}

var (
	createProgress = []TrackedState{
		TrackedState_TRACKED_STATE_CREATING,
		TrackedState_TRACKED_STATE_CREATING_DEPENDENCIES,
		TrackedState_TRACKED_STATE_CRM_INITOK,
		TrackedState_TRACKED_STATE_READY,
		TrackedState_TRACKED_STATE_CREATE_ERROR,
	}
	updateProgress = []TrackedState{
		TrackedState_TRACKED_STATE_UPDATING,
		TrackedState_TRACKED_STATE_READY,
		TrackedState_TRACKED_STATE_UPDATE_ERROR,
	}
	deleteProgress = []TrackedState{
		TrackedState_TRACKED_STATE_DELETING,
		TrackedState_TRACKED_STATE_DELETE_DONE,
		TrackedState_TRACKED_STATE_DELETE_ERROR,
		TrackedState_TRACKED_STATE_NOT_PRESENT,
	}
)

// AcceptsInfoState reports whether a controller holding an object in state
// obj accepts info, the state an engine reports for it. Unknown values are
// never accepted.
func AcceptsInfoState(obj, info TrackedState) bool {
	return slices.Contains(acceptedInfoStates[obj], info)
}

// CheckInfoState is AcceptsInfoState as an error: nil when accepted, else a
// *TransitionError naming both states (errors.Is ErrInfoStateRejected).
func CheckInfoState(obj, info TrackedState) error {
	if AcceptsInfoState(obj, info) {
		return nil
	}
	return &TransitionError{Object: obj, Info: info}
}

// AcceptedInfoStates returns the Info states an object in state obj
// accepts, in enum order; nil when none. The caller owns the slice.
func AcceptedInfoStates(obj TrackedState) []TrackedState {
	out := slices.Clone(acceptedInfoStates[obj])
	slices.Sort(out)
	return out
}
