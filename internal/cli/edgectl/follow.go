package edgectl

import (
	"context"
	"fmt"
	"strings"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/fieldmap"
	"github.com/edgekit/edgekit/internal/cli/output"
	"github.com/edgekit/edgekit/internal/cli/progress"
	"github.com/edgekit/edgekit/internal/cli/protoflags"
)

// followProgress sends a streaming create, update or delete and shows the
// progress until the stream ends. With -o json or yaml it prints every
// response instead. It fails when the call fails or the change ends in an
// error state.
func (a *app) followProgress(ctx context.Context, conn grpc.ClientConnInterface, k *Kind, verb, what string, md protoreflect.MethodDescriptor, req proto.Message) error {
	f := a.format()
	out := a.opts.Out
	var disp *progress.Display
	if f == output.Table {
		popts := progress.Options{}
		if t := a.opts.Terminal; t != nil {
			popts = progress.Options{Terminal: true, Width: t.Width, Tick: t.Tick}
		}
		disp = progress.New(out, popts)
		defer disp.Close()
	}
	var last *edgeproto.Progress
	err := callStream(ctx, conn, md, req, func(resp proto.Message) error {
		p := progressOf(resp)
		if p != nil {
			last = p
		}
		if disp == nil {
			return output.WriteEvent(out, f, resp)
		}
		for _, line := range extraFields(resp, what) {
			disp.Println(line)
		}
		if p != nil {
			text := progressText(p)
			if subj := subjectOf(resp); subj != "" {
				text = subj + ": " + text
			}
			disp.Update(stateName(p.GetState()), text)
		}
		return nil
	})
	failed := func() {
		if disp != nil && last != nil {
			disp.Finish(fmt.Sprintf("%s %s failed: %s", what, verb, stateName(last.GetState())))
		}
	}
	if err != nil {
		timedOut := status.Code(err) == codes.DeadlineExceeded && a.timeout > 0
		interrupted := status.Code(err) == codes.Canceled && ctx.Err() != nil
		if timedOut || interrupted {
			why := "interrupted"
			if timedOut {
				why = "no final state within --timeout " + a.timeout.String()
			}
			if disp != nil && last != nil {
				disp.Finish(fmt.Sprintf("%s %s: stopped waiting at %s", what, verb, stateName(last.GetState())))
			}
			msg := fmt.Sprintf("%s %s: %s; the change goes on at the controller", verb, what, why)
			if info := a.infoKind(k); info != nil {
				msg += fmt.Sprintf(" (follow it with: edgectl watch %s %s)", info.Name, quoteKey(what, k))
			}
			return &callError{op: msg, err: err}
		}
		failed()
		return &callError{op: verb + " " + what, err: err}
	}
	if last == nil {
		return fmt.Errorf("%s %s: the controller ended the call without reporting progress", verb, what)
	}
	if edgeproto.IsErrorState(last.GetState()) {
		failed()
		msg := fmt.Sprintf("%s %s failed: %s", verb, what, stateName(last.GetState()))
		if len(last.GetErrors()) > 0 {
			msg += ": " + strings.Join(last.GetErrors(), "; ")
		}
		return fmt.Errorf("%s", msg)
	}
	if disp != nil {
		final := fmt.Sprintf("%s %s: %s", what, pastTense(verb), stateName(last.GetState()))
		if edgeproto.IsRequestedState(last.GetState()) {
			final = fmt.Sprintf("%s %s requested: %s", what, verb, stateName(last.GetState()))
			if info := a.infoKind(k); info != nil {
				final += fmt.Sprintf(" (follow it with: edgectl watch %s %s)", info.Name, quoteKey(what, k))
			}
		}
		disp.Finish(final)
	}
	return nil
}

// quoteKey returns the key part of what ("kind key"), for a command the
// user can paste.
func quoteKey(what string, k *Kind) string {
	return strings.TrimSpace(strings.TrimPrefix(what, k.Name))
}

// progressOf returns the Progress of a create, update or delete response.
func progressOf(resp proto.Message) *edgeproto.Progress {
	fd := field(resp, "progress")
	if fd == nil || !resp.ProtoReflect().Has(fd) {
		return nil
	}
	p, _ := resp.ProtoReflect().Get(fd).Message().Interface().(*edgeproto.Progress)
	return p
}

// progressText is the newest progress message, or the rendered status.
func progressText(p *edgeproto.Progress) string {
	if p.GetMessage() != "" {
		return p.GetMessage()
	}
	return p.GetStatus().Render()
}

var trackedState = edgeproto.TrackedState(0).Descriptor()

// stateName is a TrackedState without its prefix: READY.
func stateName(s edgeproto.TrackedState) string {
	return protoflags.EnumString(trackedState, protoreflect.EnumNumber(s))
}

// extraFields returns lines for the fields of a response other than its
// progress: a secret the controller shows once (the access key of a
// cloudlet whose resource manager runs on the edge site) gets a notice to
// keep it.
func extraFields(resp proto.Message, what string) []string {
	var lines []string
	m := resp.ProtoReflect()
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		if fd.Name() == "progress" || isSubject(fd) {
			return true
		}
		text := protoflags.FormatScalar(fd, v)
		if fd.IsList() || fd.IsMap() || fd.Message() != nil {
			text = output.FormatPath(m, string(fd.Name()))
		}
		if fieldmap.IsRedacted(fd) {
			lines = append(lines,
				fmt.Sprintf("The %s of %s is shown only this once; keep it safe:", fd.Name(), what),
				fmt.Sprintf("  %s: %s", fd.Name(), text))
			return true
		}
		lines = append(lines, fmt.Sprintf("%s: %s", fd.Name(), text))
		return true
	})
	return lines
}

// isSubject reports whether fd names the object a step of a response is
// about, beside its progress: a key field such as RefreshAppInsts's
// app_inst_key (one call, several objects).
func isSubject(fd protoreflect.FieldDescriptor) bool {
	return fd.Message() != nil && !fd.IsList() && !fd.IsMap() &&
		strings.HasSuffix(string(fd.Name()), "_key") && strings.HasSuffix(string(fd.Message().Name()), "Key")
}

// subjectOf returns the key string of the object a step is about (see
// isSubject), or "" when the step is about the call's own object.
func subjectOf(resp proto.Message) string {
	m := resp.ProtoReflect()
	fields := m.Descriptor().Fields()
	for i := range fields.Len() {
		if fd := fields.Get(i); isSubject(fd) && m.Has(fd) {
			return fieldmap.KeyString(m.Get(fd).Message().Interface())
		}
	}
	return ""
}
