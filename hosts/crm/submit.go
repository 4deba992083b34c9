package crm

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/executor"
	"github.com/edgekit/edgekit/internal/notify"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// submitter hands the engine what the objects ask for, once per request.
//
// A request is an object in a *_REQUESTED state (for a cloudlet also a
// trust-policy update or maintenance request). The controller moves the
// object on as soon as the engine's first report arrives, so the same
// request is seen again only while its reports are on their way (a resync
// after a broken stream). The submitter remembers the request it submitted
// for each object and submits only a different one; it forgets it when the
// object asks for nothing, so that a later request of the same kind (a
// second update) is new.
type submitter struct {
	eng     *executor.Engine
	log     *slog.Logger
	metrics *metrics

	mu    sync.Mutex
	asked map[string]string // "<Kind>/<key>" -> signature of the submitted request
}

func newSubmitter(eng *executor.Engine, log *slog.Logger, m *metrics) *submitter {
	return &submitter{eng: eng, log: log, metrics: m, asked: map[string]string{}}
}

// resumed maps the *ING state a crashed engine left behind to the request
// it was working on.
var resumed = map[edgeproto.TrackedState]edgeproto.TrackedState{
	edgeproto.TrackedState_TRACKED_STATE_CREATING: edgeproto.TrackedState_TRACKED_STATE_CREATE_REQUESTED,
	edgeproto.TrackedState_TRACKED_STATE_UPDATING: edgeproto.TrackedState_TRACKED_STATE_UPDATE_REQUESTED,
	edgeproto.TrackedState_TRACKED_STATE_DELETING: edgeproto.TrackedState_TRACKED_STATE_DELETE_REQUESTED,
}

// request returns what obj asks of the engine: the object to submit and the
// request's signature ("" when it asks for nothing). With resume, an
// object left in an *ING state asks again for the change in progress (the
// CRM that worked on it stopped; platforms adopt what exists).
func request(obj proto.Message, resume bool) (proto.Message, string) {
	state := func(s edgeproto.TrackedState) (edgeproto.TrackedState, string) {
		if r, ok := resumed[s]; ok && resume {
			s = r
		}
		if edgeproto.IsRequestedState(s) {
			return s, s.String()
		}
		return s, ""
	}
	switch o := obj.(type) {
	case *edgeproto.ClusterInst:
		s, sig := state(o.GetState())
		if sig == "" {
			return nil, ""
		}
		return withState(o, s), sig
	case *edgeproto.AppInst:
		s, sig := state(o.GetState())
		if sig == "" {
			return nil, ""
		}
		return withState(o, s), sig
	case *edgeproto.TrustPolicyException:
		// The entries that ask for work; the signature names each with
		// its request, so that a new request of an entry is submitted.
		out := o.Clone()
		var parts []string
		for _, in := range out.Instances {
			s, sig := state(in.GetState())
			if sig == "" {
				continue
			}
			in.State = s
			parts = append(parts, executor.KeyString(in.GetAppInstKey())+"="+sig)
		}
		if len(parts) == 0 {
			return nil, ""
		}
		return out, strings.Join(parts, ",")
	case *edgeproto.Cloudlet:
		s, sig := state(o.GetState())
		var parts []string
		if sig != "" {
			parts = append(parts, sig)
		}
		if edgeproto.IsDeleteState(s) {
			if sig == "" {
				return nil, ""
			}
			return withState(o, s), sig
		}
		if o.GetTrustPolicyState() == edgeproto.TrackedState_TRACKED_STATE_UPDATE_REQUESTED {
			parts = append(parts, "trust-policy")
		}
		if o.GetMaintenanceState() == edgeproto.MaintenanceState_MAINTENANCE_STATE_CRM_REQUESTED {
			parts = append(parts, "maintenance")
		}
		if len(parts) == 0 {
			return nil, ""
		}
		return withState(o, s), strings.Join(parts, "+")
	}
	return nil, ""
}

// stateful is a tracked object: a Cloudlet, a ClusterInst or an AppInst.
type stateful[T any] interface {
	proto.Message
	Clone() T
	GetState() edgeproto.TrackedState
}

// withState returns a clone of o in state s.
func withState[T stateful[T]](o T, s edgeproto.TrackedState) T {
	c := o.Clone()
	m := c.ProtoReflect()
	m.Set(m.Descriptor().Fields().ByName("state"), protoreflect.ValueOfEnum(s.Number()))
	return c
}

// deleteOf returns a clone of o asking to be deleted, or nil when o is on
// its way out already.
func deleteOf[T stateful[T]](o T) proto.Message {
	if edgeproto.IsDeleteState(o.GetState()) {
		return nil
	}
	return withState(o, edgeproto.TrackedState_TRACKED_STATE_DELETE_REQUESTED)
}

func id(obj proto.Message) string { return notify.KindOf(obj) + "/" + executor.KeyString(obj) }

// record remembers what obj asks for as submitted, without submitting it:
// start-up reconciliation carries it out.
func (s *submitter) record(obj proto.Message) {
	_, sig := request(obj, false)
	if sig == "" {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.asked[id(obj)] = sig
}

// consider submits what obj asks for, unless it was submitted already.
func (s *submitter) consider(obj proto.Message, resume bool) {
	req, sig := request(obj, resume)
	key := id(obj)
	s.mu.Lock()
	defer s.mu.Unlock()
	if sig == "" {
		delete(s.asked, key)
		return
	}
	if s.asked[key] == sig {
		return
	}
	s.asked[key] = sig
	s.submit(req, sig)
}

func (s *submitter) submit(obj proto.Message, what string) {
	kind, key := notify.KindOf(obj), executor.KeyString(obj)
	if _, err := s.eng.Submit(obj); err != nil {
		lvl := slog.LevelWarn
		if errors.Is(err, executor.ErrNoChange) || errors.Is(err, executor.ErrStopped) {
			lvl = slog.LevelDebug
		}
		s.log.LogAttrs(context.Background(), lvl, "not submitted", slog.String("kind", kind), slog.String("key", key),
			slog.String("request", what), slog.Any("error", err))
		return
	}
	s.metrics.submitted.WithLabelValues(kind).Inc()
	s.log.LogAttrs(context.Background(), slog.LevelInfo, "submitted", slog.String("kind", kind), slog.String("key", key),
		slog.String("request", what))
}

// refresh submits a settled cloudlet so that the engine gathers its info
// again and reports it READY (a CRM that starts on an initialised site).
func (s *submitter) refresh(c *edgeproto.Cloudlet) {
	if c.GetState() != edgeproto.TrackedState_TRACKED_STATE_READY {
		return
	}
	s.submit(c, "refresh")
}

// gone is told that the controller no longer has obj (prev is the CRM's
// last copy). When the CRM did not see it being deleted (deleted while the
// CRM was away, or without the resource manager), whatever the platform
// has of it is deleted, so the site converges to what the controller
// wants; the engine's reports on it are then stale and rejected, which is
// harmless.
func (s *submitter) gone(prev proto.Message) {
	key := id(prev)
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.asked, key)
	var del proto.Message
	switch o := prev.(type) {
	case *edgeproto.ClusterInst:
		del = deleteOf(o)
	case *edgeproto.AppInst:
		del = deleteOf(o)
	case *edgeproto.Cloudlet:
		del = deleteOf(o)
	}
	if del != nil {
		s.submit(del, "cleanup of an object deleted while away")
	}
}
