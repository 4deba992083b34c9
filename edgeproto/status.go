package edgeproto

import (
	"strconv"
	"strings"
)

// The methods below are named so as not to clash with the methods that
// protoc-gen-go (String, Reset) and protoc-gen-go-edgekit generate.

// SetTask starts the next task of a change: it advances TaskNumber, sets
// TaskName, clears StepName and appends name to Msgs (an empty name is not
// appended). It does nothing on a nil StatusInfo.
func (s *StatusInfo) SetTask(name string) {
	if s == nil {
		return
	}
	s.TaskNumber++
	s.TaskName = name
	s.StepName = ""
	s.AppendMsg(name)
}

// SetStep sets the step within the current task and appends name to Msgs
// (an empty name clears the step and is not appended). It does nothing on
// a nil StatusInfo.
func (s *StatusInfo) SetStep(name string) {
	if s == nil {
		return
	}
	s.StepName = name
	s.AppendMsg(name)
}

// AppendMsg appends msg to Msgs and counts it in MsgCount. An empty msg is
// ignored, as is a nil StatusInfo.
func (s *StatusInfo) AppendMsg(msg string) {
	if s == nil || msg == "" {
		return
	}
	s.Msgs = append(s.Msgs, msg)
	s.MsgCount++
}

// ResetProgress clears every field, ready for a new change. (Reset, the
// protoc-gen-go method, also clears internal state; ResetProgress keeps the
// message usable while other code holds it.)
func (s *StatusInfo) ResetProgress() {
	if s == nil {
		return
	}
	s.TaskNumber = 0
	s.MaxTasks = 0
	s.TaskName = ""
	s.StepName = ""
	s.MsgCount = 0
	s.Msgs = nil
}

// Render returns the progress in readable form, for example
// "Task 2 of 5: Creating cluster, Step: Waiting for nodes". "of N" is left
// out when MaxTasks is 0, the step when StepName is empty, the task number
// when TaskNumber is 0. Render of a nil or empty StatusInfo is "".
func (s *StatusInfo) Render() string {
	if s == nil {
		return ""
	}
	var b strings.Builder
	if s.TaskNumber > 0 {
		b.WriteString("Task ")
		b.WriteString(strconv.FormatUint(uint64(s.TaskNumber), 10))
		if s.MaxTasks > 0 {
			b.WriteString(" of ")
			b.WriteString(strconv.FormatUint(uint64(s.MaxTasks), 10))
		}
	}
	if s.TaskName != "" {
		if b.Len() > 0 {
			b.WriteString(": ")
		}
		b.WriteString(s.TaskName)
	}
	if s.StepName != "" {
		if b.Len() > 0 {
			b.WriteString(", ")
		}
		b.WriteString("Step: ")
		b.WriteString(s.StepName)
	}
	return b.String()
}
