package edgeproto_test

import (
	"fmt"

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/fieldmap"
)

// A partial update: only the task name of the status is applied, and the
// count says whether anything changed.
func ExampleCloudletInfo_CopyInFields() {
	stored := &edgeproto.CloudletInfo{
		Key:    &edgeproto.CloudletKey{Organization: "acme", Name: "edge-1"},
		Status: &edgeproto.StatusInfo{TaskNumber: 1, TaskName: "Starting"},
	}
	update := &edgeproto.CloudletInfo{Status: &edgeproto.StatusInfo{TaskName: "Creating"}}

	fm, err := edgeproto.NewCloudletInfoFieldMap(edgeproto.CloudletInfoFieldStatusTaskName)
	if err != nil {
		panic(err)
	}
	fmt.Println(edgeproto.CloudletInfoFieldStatusTaskName, stored.CopyInFields(update, fm), stored.GetStatus().Render())
	fmt.Println("again:", stored.CopyInFields(update, fm))

	// The parent flag copies the whole nested struct.
	stored.CopyInFields(update, fieldmap.Of(edgeproto.CloudletInfoFieldStatus))
	fmt.Println(stored.GetStatus().GetTaskNumber(), stored.GetStatus().GetTaskName())
	// Output:
	// 11.3 1 Task 1: Creating
	// again: 0
	// 0 Creating
}

// DiffFields names what differs, so copying exactly those fields makes the
// objects equal.
func ExampleCloudletInfo_DiffFields() {
	a := &edgeproto.CloudletInfo{State: edgeproto.CloudletState_CLOUDLET_STATE_INIT,
		Status: &edgeproto.StatusInfo{StepName: "a"}}
	b := &edgeproto.CloudletInfo{State: edgeproto.CloudletState_CLOUDLET_STATE_READY,
		Status: &edgeproto.StatusInfo{StepName: "b"}}
	diff := a.DiffFields(b)
	fmt.Println(diff.Fields())
	a.CopyInFields(b, diff)
	fmt.Println(a.Equal(b))
	// Output:
	// [2 11 11.4]
	// true
}

// Unknown flags are errors that name them, never silently ignored.
func ExampleNewCloudletInfoFieldMap() {
	_, err := edgeproto.NewCloudletInfoFieldMap("11.3", "11.99")
	fmt.Println(err)
	// Output:
	// edgeproto.v1.CloudletInfo: unknown field flag "11.99"
}

// Key strings are deterministic and parse back.
func ExampleCloudlet_GetKeyString() {
	c := &edgeproto.Cloudlet{Key: &edgeproto.CloudletKey{Organization: "acme", Name: "edge,1"}}
	s := c.GetKeyString()
	k, err := edgeproto.ParseCloudletKeyString(s)
	fmt.Println(s, k.GetName(), err)
	// Output:
	// organization=acme,name=edge%2C1 edge,1 <nil>
}

// Redacted returns a copy safe to log; the object keeps its secrets.
func ExampleCloudlet_Redacted() {
	c := &edgeproto.Cloudlet{AccessVars: map[string]string{"token": "s3cret"}}
	fmt.Println(len(c.Redacted().GetAccessVars()), len(c.GetAccessVars()))
	// Output:
	// 0 1
}
