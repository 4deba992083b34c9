package edgeproto

import "testing"

func TestStateClassification(t *testing.T) {
	// Columns: requested, transient, error, delete.
	want := map[TrackedState][4]bool{
		TrackedState_TRACKED_STATE_UNSPECIFIED:           {false, false, false, false},
		TrackedState_TRACKED_STATE_NOT_PRESENT:           {false, false, false, false},
		TrackedState_TRACKED_STATE_CREATE_REQUESTED:      {true, true, false, false},
		TrackedState_TRACKED_STATE_CREATING:              {false, true, false, false},
		TrackedState_TRACKED_STATE_CREATE_ERROR:          {false, false, true, false},
		TrackedState_TRACKED_STATE_READY:                 {false, false, false, false},
		TrackedState_TRACKED_STATE_UPDATE_REQUESTED:      {true, true, false, false},
		TrackedState_TRACKED_STATE_UPDATING:              {false, true, false, false},
		TrackedState_TRACKED_STATE_UPDATE_ERROR:          {false, false, true, false},
		TrackedState_TRACKED_STATE_DELETE_REQUESTED:      {true, true, false, true},
		TrackedState_TRACKED_STATE_DELETING:              {false, true, false, true},
		TrackedState_TRACKED_STATE_DELETE_ERROR:          {false, false, true, false},
		TrackedState_TRACKED_STATE_DELETE_PREPARE:        {false, true, false, true},
		TrackedState_TRACKED_STATE_CRM_INITOK:            {false, true, false, false},
		TrackedState_TRACKED_STATE_CREATING_DEPENDENCIES: {false, true, false, false},
		TrackedState_TRACKED_STATE_DELETE_DONE:           {false, false, false, true},
		TrackedState(99):                                 {false, false, false, false},
	}
	for s, w := range want {
		got := [4]bool{IsRequestedState(s), IsTransientState(s), IsErrorState(s), IsDeleteState(s)}
		if got != w {
			t.Errorf("%s: requested/transient/error/delete = %v, want %v", s, got, w)
		}
	}
}

func TestCRMOverride(t *testing.T) {
	// Columns: ignores CRM, ignores CRM errors, ignores transient state.
	want := map[CRMOverride][3]bool{
		CRMOverride_CRM_OVERRIDE_UNSPECIFIED:                    {false, false, false},
		CRMOverride_CRM_OVERRIDE_IGNORE_CRM_ERRORS:              {false, true, false},
		CRMOverride_CRM_OVERRIDE_IGNORE_CRM:                     {true, true, false},
		CRMOverride_CRM_OVERRIDE_IGNORE_TRANSIENT_STATE:         {false, false, true},
		CRMOverride_CRM_OVERRIDE_IGNORE_CRM_AND_TRANSIENT_STATE: {true, true, true},
		CRMOverride(42): {false, false, false},
	}
	for o, w := range want {
		got := [3]bool{IgnoresCRM(o), IgnoresCRMErrors(o), IgnoresTransientState(o)}
		if got != w {
			t.Errorf("%s: %v, want %v", o, got, w)
		}
	}
}
