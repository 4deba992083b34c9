package fakecontroller

import (
	"slices"

	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/edgekit/edgekit/edgeproto"
)

// watcher is one Watch call's queue of events.
type watcher struct {
	name   protoreflect.FullName
	filter protoreflect.Message
	events chan event
}

type event struct {
	typ edgeproto.EventType
	obj proto.Message
}

// put stores m and tells the watchers; s.mu is held.
func (s *Server) put(m proto.Message) {
	name := m.ProtoReflect().Descriptor().FullName()
	if s.objects[name] == nil {
		s.objects[name] = map[string]proto.Message{}
	}
	s.objects[name][keyOf(m)] = m
	s.notify(edgeproto.EventType_EVENT_TYPE_PUT, m)
}

// remove deletes m and its Info twin; s.mu is held.
func (s *Server) remove(m proto.Message) {
	key := keyOf(m)
	for _, name := range []protoreflect.FullName{m.ProtoReflect().Descriptor().FullName(), m.ProtoReflect().Descriptor().FullName() + "Info"} {
		if gone := s.objects[name][key]; gone != nil {
			delete(s.objects[name], key)
			s.notify(edgeproto.EventType_EVENT_TYPE_DELETE, gone)
		}
	}
}

// notify queues an event for the watchers of m's message; s.mu is held. A
// watcher whose queue is full loses the event (tests keep them small).
func (s *Server) notify(typ edgeproto.EventType, m proto.Message) {
	for w := range s.watchers {
		if w.name == m.ProtoReflect().Descriptor().FullName() && matches(m.ProtoReflect(), w.filter) {
			select {
			case w.events <- event{typ, proto.Clone(m)}:
			default:
			}
		}
	}
}

func (c *call) watch() error {
	filter := c.reqField("filter").Message()
	w := &watcher{name: filter.Descriptor().FullName(), filter: filter, events: make(chan event, 1000)}
	c.s.mu.Lock()
	var initial []proto.Message
	for _, key := range sortedKeys(c.s.objects[w.name]) {
		if m := c.s.objects[w.name][key]; matches(m.ProtoReflect(), filter) {
			initial = append(initial, proto.Clone(m))
		}
	}
	c.s.watchers[w] = true
	c.s.mu.Unlock()
	defer func() {
		c.s.mu.Lock()
		delete(c.s.watchers, w)
		c.s.mu.Unlock()
	}()
	for _, m := range initial {
		if err := c.sendEvent(edgeproto.EventType_EVENT_TYPE_PUT, m); err != nil {
			return err
		}
	}
	if err := c.sendEvent(edgeproto.EventType_EVENT_TYPE_SYNCED, nil); err != nil {
		return err
	}
	for {
		select {
		case <-c.stream.Context().Done():
			return status.FromContextError(c.stream.Context().Err()).Err()
		case e := <-w.events:
			if err := c.sendEvent(e.typ, e.obj); err != nil {
				return err
			}
		}
	}
}

func (c *call) sendEvent(typ edgeproto.EventType, m proto.Message) error {
	return c.respond(func(resp protoreflect.Message) {
		resp.Set(resp.Descriptor().Fields().ByName("type"), protoreflect.ValueOfEnum(protoreflect.EnumNumber(typ)))
		if m == nil {
			return
		}
		fields := resp.Descriptor().Fields()
		for i := range fields.Len() {
			if fd := fields.Get(i); fd.Message() != nil && fd.Message().FullName() == m.ProtoReflect().Descriptor().FullName() {
				resp.Set(fd, protoreflect.ValueOfMessage(m.ProtoReflect()))
			}
		}
	})
}

func sortedKeys(m map[string]proto.Message) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
