package edgeproto

import (
	"slices"
	"testing"
)

func TestStatusInfoRender(t *testing.T) {
	for _, c := range []struct {
		name string
		s    *StatusInfo
		want string
	}{
		{"nil", nil, ""},
		{"empty", &StatusInfo{}, ""},
		{"full", &StatusInfo{TaskNumber: 2, MaxTasks: 5, TaskName: "Creating cluster", StepName: "Waiting for nodes"}, "Task 2 of 5: Creating cluster, Step: Waiting for nodes"},
		{"no max", &StatusInfo{TaskNumber: 2, TaskName: "Creating cluster", StepName: "Waiting for nodes"}, "Task 2: Creating cluster, Step: Waiting for nodes"},
		{"no step", &StatusInfo{TaskNumber: 1, MaxTasks: 3, TaskName: "Pulling image"}, "Task 1 of 3: Pulling image"},
		{"number only", &StatusInfo{TaskNumber: 4, MaxTasks: 4}, "Task 4 of 4"},
		{"name only", &StatusInfo{TaskName: "Deleting"}, "Deleting"},
		{"step only", &StatusInfo{StepName: "Waiting"}, "Step: Waiting"},
		{"number and step", &StatusInfo{TaskNumber: 3, StepName: "Waiting"}, "Task 3, Step: Waiting"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := c.s.Render(); got != c.want {
				t.Errorf("Render() = %q, want %q", got, c.want)
			}
		})
	}
}

func TestStatusInfoTasksAndSteps(t *testing.T) {
	s := &StatusInfo{MaxTasks: 3}
	s.SetTask("Creating cluster")
	s.SetStep("Waiting for nodes")
	if got, want := s.Render(), "Task 1 of 3: Creating cluster, Step: Waiting for nodes"; got != want {
		t.Fatalf("after SetTask+SetStep: %q, want %q", got, want)
	}
	s.SetTask("Deploying app")
	if got, want := s.Render(), "Task 2 of 3: Deploying app"; got != want {
		t.Fatalf("SetTask did not reset the step: %q, want %q", got, want)
	}
	s.SetStep("")
	s.AppendMsg("")
	s.AppendMsg("pulled image")
	wantMsgs := []string{"Creating cluster", "Waiting for nodes", "Deploying app", "pulled image"}
	if !slices.Equal(s.Msgs, wantMsgs) || s.MsgCount != int32(len(wantMsgs)) {
		t.Fatalf("Msgs = %q (count %d), want %q (count %d)", s.Msgs, s.MsgCount, wantMsgs, len(wantMsgs))
	}
	s.ResetProgress()
	if s.TaskNumber != 0 || s.MaxTasks != 0 || s.TaskName != "" || s.StepName != "" || s.MsgCount != 0 || s.Msgs != nil {
		t.Fatalf("ResetProgress left %v", s)
	}
	if s.Render() != "" {
		t.Fatalf("Render after ResetProgress = %q", s.Render())
	}
}

func TestStatusInfoNilReceiver(t *testing.T) {
	var s *StatusInfo
	s.SetTask("x")
	s.SetStep("y")
	s.AppendMsg("z")
	s.ResetProgress()
	if s.Render() != "" {
		t.Fatal("nil Render not empty")
	}
}
