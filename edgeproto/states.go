package edgeproto

// IsRequestedState reports whether s is a state the user sets to ask for a
// change: CREATE_REQUESTED, UPDATE_REQUESTED or DELETE_REQUESTED.
func IsRequestedState(s TrackedState) bool {
	switch s {
	case TrackedState_TRACKED_STATE_CREATE_REQUESTED,
		TrackedState_TRACKED_STATE_UPDATE_REQUESTED,
		TrackedState_TRACKED_STATE_DELETE_REQUESTED:
		return true
	}
	return false
}

// IsTransientState reports whether a change is in flight in state s: a
// *_REQUESTED state, an *ING state, CREATING_DEPENDENCIES, DELETE_PREPARE
// or CRM_INITOK. A controller refuses a new change to an object in a
// transient state unless told to with CRMOverride.
func IsTransientState(s TrackedState) bool {
	switch s {
	case TrackedState_TRACKED_STATE_CREATE_REQUESTED,
		TrackedState_TRACKED_STATE_CREATING,
		TrackedState_TRACKED_STATE_CREATING_DEPENDENCIES,
		TrackedState_TRACKED_STATE_CRM_INITOK,
		TrackedState_TRACKED_STATE_UPDATE_REQUESTED,
		TrackedState_TRACKED_STATE_UPDATING,
		TrackedState_TRACKED_STATE_DELETE_PREPARE,
		TrackedState_TRACKED_STATE_DELETE_REQUESTED,
		TrackedState_TRACKED_STATE_DELETING:
		return true
	}
	return false
}

// IsErrorState reports whether s is CREATE_ERROR, UPDATE_ERROR or
// DELETE_ERROR.
func IsErrorState(s TrackedState) bool {
	switch s {
	case TrackedState_TRACKED_STATE_CREATE_ERROR,
		TrackedState_TRACKED_STATE_UPDATE_ERROR,
		TrackedState_TRACKED_STATE_DELETE_ERROR:
		return true
	}
	return false
}

// IsDeleteState reports whether an object in state s is on its way out:
// DELETE_PREPARE, DELETE_REQUESTED, DELETING or DELETE_DONE. DELETE_ERROR
// is not one: the object failed to go and stays until deleted again.
func IsDeleteState(s TrackedState) bool {
	switch s {
	case TrackedState_TRACKED_STATE_DELETE_PREPARE,
		TrackedState_TRACKED_STATE_DELETE_REQUESTED,
		TrackedState_TRACKED_STATE_DELETING,
		TrackedState_TRACKED_STATE_DELETE_DONE:
		return true
	}
	return false
}

// IgnoresCRM reports whether o tells the controller to apply a change
// without sending it to the cloudlet resource manager.
func IgnoresCRM(o CRMOverride) bool {
	return o == CRMOverride_CRM_OVERRIDE_IGNORE_CRM ||
		o == CRMOverride_CRM_OVERRIDE_IGNORE_CRM_AND_TRANSIENT_STATE
}

// IgnoresCRMErrors reports whether o tells the controller to apply a change
// even when the cloudlet resource manager reports errors. Ignoring the
// resource manager altogether ignores its errors too.
func IgnoresCRMErrors(o CRMOverride) bool {
	return o == CRMOverride_CRM_OVERRIDE_IGNORE_CRM_ERRORS || IgnoresCRM(o)
}

// IgnoresTransientState reports whether o tells the controller to apply a
// change to an object in a transient state.
func IgnoresTransientState(o CRMOverride) bool {
	return o == CRMOverride_CRM_OVERRIDE_IGNORE_TRANSIENT_STATE ||
		o == CRMOverride_CRM_OVERRIDE_IGNORE_CRM_AND_TRANSIENT_STATE
}
