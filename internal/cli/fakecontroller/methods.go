package fakecontroller

import (
	"strings"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/fieldmap"
	"github.com/edgekit/edgekit/internal/apifields"
	"github.com/edgekit/edgekit/internal/reference"
)

// call is one call being served.
type call struct {
	s      *Server
	md     protoreflect.MethodDescriptor
	req    proto.Message
	stream grpc.ServerStream
}

func (c *call) serve() error {
	name := string(c.md.Name())
	switch {
	case name == "ShowSettings":
		return c.settingsReply(func(proto.Message) error { return nil })
	case name == "ResetSettings":
		return c.settingsReply(func(m proto.Message) error { proto.Reset(m); return nil })
	case name == "UpdateSettings":
		return c.settingsReply(c.updateSettings)
	case strings.HasPrefix(name, "Create"):
		return c.create()
	case strings.HasPrefix(name, "Update"):
		return c.update()
	case strings.HasPrefix(name, "Delete"):
		return c.delete()
	case strings.HasPrefix(name, "Show"):
		return c.show()
	case strings.HasPrefix(name, "Watch"):
		return c.watch()
	}
	return status.Errorf(codes.Unimplemented, "fake controller: %s", name)
}

// object returns the request's object: its first singular message field
// that is not a key, and the field.
func (c *call) object() (proto.Message, protoreflect.FieldDescriptor) {
	fields := c.req.ProtoReflect().Descriptor().Fields()
	for i := range fields.Len() {
		fd := fields.Get(i)
		if fd.Message() != nil && !fd.IsList() && !fd.IsMap() && fd.Name() != "key" {
			return c.req.ProtoReflect().Get(fd).Message().Interface(), fd
		}
	}
	return nil, nil
}

// reqField returns a field of the request by name.
func (c *call) reqField(name protoreflect.Name) protoreflect.Value {
	fd := c.req.ProtoReflect().Descriptor().Fields().ByName(name)
	if fd == nil {
		return protoreflect.Value{}
	}
	return c.req.ProtoReflect().Get(fd)
}

func keyOf(m proto.Message) string {
	fd := m.ProtoReflect().Descriptor().Fields().ByName("key")
	if fd == nil {
		return ""
	}
	return fieldmap.KeyString(m.ProtoReflect().Get(fd).Message().Interface())
}

// respond sends a response message built by fill.
func (c *call) respond(fill func(resp protoreflect.Message)) error {
	resp, err := newMessage(c.md.Output())
	if err != nil {
		return status.Error(codes.Internal, err.Error())
	}
	fill(resp.ProtoReflect())
	return c.stream.SendMsg(resp)
}

// respondObject sends a unary response holding obj in its field of obj's
// type (an empty response when it has none).
func (c *call) respondObject(obj proto.Message) error {
	return c.respond(func(resp protoreflect.Message) {
		fields := resp.Descriptor().Fields()
		for i := range fields.Len() {
			fd := fields.Get(i)
			if fd.Message() != nil && obj != nil && fd.Message().FullName() == obj.ProtoReflect().Descriptor().FullName() {
				resp.Set(fd, protoreflect.ValueOfMessage(fieldmap.Redacted(obj).ProtoReflect()))
			}
		}
	})
}

func (c *call) create() error {
	obj, _ := c.object()
	if obj == nil {
		return status.Error(codes.InvalidArgument, "no object in the request")
	}
	if err := apifields.CheckCreate(obj); err != nil {
		return status.Error(codes.InvalidArgument, err.Error())
	}
	if err := obj.ProtoReflect().Interface().(interface{ ValidateEnums() error }).ValidateEnums(); err != nil {
		return status.Error(codes.InvalidArgument, err.Error())
	}
	key := keyOf(obj)
	name := obj.ProtoReflect().Descriptor().FullName()
	c.s.mu.Lock()
	if c.s.objects[name][key] != nil {
		c.s.mu.Unlock()
		return status.Errorf(codes.AlreadyExists, "%s %s already exists", name.Name(), key)
	}
	obj = proto.Clone(obj)
	c.s.put(obj)
	c.s.mu.Unlock()
	if !c.md.IsStreamingServer() {
		return c.respondObject(obj)
	}
	return c.progress(obj, "create")
}

func (c *call) update() error {
	obj, _ := c.object()
	if obj == nil {
		return status.Error(codes.InvalidArgument, "no object in the request")
	}
	fm, err := c.fieldMap(obj)
	if err != nil {
		return err
	}
	key := keyOf(obj)
	name := obj.ProtoReflect().Descriptor().FullName()
	c.s.mu.Lock()
	stored := c.s.objects[name][key]
	if stored == nil {
		c.s.mu.Unlock()
		return status.Errorf(codes.NotFound, "%s %s not found", name.Name(), key)
	}
	stored = proto.Clone(stored)
	reference.CopyInFields(stored.ProtoReflect(), obj.ProtoReflect(), fm)
	c.s.put(stored)
	c.s.mu.Unlock()
	if !c.md.IsStreamingServer() {
		return c.respondObject(stored)
	}
	return c.progress(stored, "update")
}

// fieldMap checks the request's fields against the object's schema and
// the fields users may change.
func (c *call) fieldMap(obj proto.Message) (*fieldmap.FieldMap, error) {
	var flags []string
	l := c.reqField("fields").List()
	for i := range l.Len() {
		flags = append(flags, l.Get(i).String())
	}
	if len(flags) == 0 {
		return nil, status.Error(codes.InvalidArgument, "no fields to update")
	}
	schema := obj.ProtoReflect().Interface().(interface{ FieldSchema() *fieldmap.Schema }).FieldSchema()
	fm, err := schema.Parse(flags...)
	if err != nil {
		return nil, status.Error(codes.InvalidArgument, err.Error())
	}
	if err := apifields.CheckUpdate(fm); err != nil {
		return nil, status.Error(codes.InvalidArgument, err.Error())
	}
	return fm, nil
}

func (c *call) delete() error {
	keyMsg := c.reqField("key").Message().Interface()
	key := fieldmap.KeyString(keyMsg)
	name := protoreflect.FullName(strings.TrimSuffix(string(c.md.Input().FullName()), "Request"))
	name = name.Parent().Append(protoreflect.Name(strings.TrimPrefix(string(name.Name()), "Delete")))
	c.s.mu.Lock()
	stored := c.s.objects[name][key]
	c.s.mu.Unlock()
	if stored == nil {
		return status.Errorf(codes.NotFound, "%s %s not found", name.Name(), key)
	}
	if !c.md.IsStreamingServer() {
		c.s.mu.Lock()
		c.s.remove(stored)
		c.s.mu.Unlock()
		return c.respondObject(nil)
	}
	return c.progress(proto.Clone(stored), "delete")
}

// steps are the progress messages of every change after the request.
var steps = []struct{ task, step string }{
	{"Preparing", ""},
	{"Preparing", "Checking resources"},
	{"Applying", ""},
}

// progress streams the fixed progress of a change of obj, mirroring each
// step onto obj's state and its Info twin, and ends in the final state or,
// for an object Fail names, in the error state with an ABORTED status.
func (c *call) progress(obj proto.Message, verb string) error {
	requested, working, done, failed := states(verb)
	key := keyOf(obj)
	c.s.mu.Lock()
	errs, fail := c.s.fail[key]
	c.s.mu.Unlock()
	send := func(p *edgeproto.Progress, extra func(protoreflect.Message)) error {
		c.s.mu.Lock()
		c.s.setState(obj, p)
		c.s.mu.Unlock()
		return c.respond(func(resp protoreflect.Message) {
			resp.Set(resp.Descriptor().Fields().ByName("progress"), protoreflect.ValueOfMessage(p.ProtoReflect()))
			if extra != nil {
				extra(resp)
			}
		})
	}
	noWait := c.reqField("no_wait").Bool()
	first := &edgeproto.Progress{State: requested, Message: "Requested " + verb, Final: noWait}
	err := send(first, func(resp protoreflect.Message) {
		cl, ok := obj.(*edgeproto.Cloudlet)
		if fd := resp.Descriptor().Fields().ByName("crm_access_key"); ok && verb == "create" && fd != nil && cl.GetCrmOnEdge() {
			resp.Set(fd, protoreflect.ValueOfString("access-key-of-"+cl.GetKey().GetName()))
		}
	})
	if err != nil || noWait {
		return err
	}
	c.s.mu.Lock()
	held := c.s.hold[key]
	c.s.mu.Unlock()
	if held != nil {
		select {
		case <-held:
		case <-c.stream.Context().Done():
			return status.FromContextError(c.stream.Context().Err()).Err()
		}
	}
	st := &edgeproto.StatusInfo{MaxTasks: 2}
	for _, s := range steps {
		if s.step == "" {
			st.SetTask(s.task + " " + string(obj.ProtoReflect().Descriptor().Name()))
		} else {
			st.SetStep(s.step)
		}
		if err := send(&edgeproto.Progress{State: working, Message: st.Render(), Status: proto.Clone(st).(*edgeproto.StatusInfo)}, nil); err != nil {
			return err
		}
	}
	if fail {
		if err := send(&edgeproto.Progress{State: failed, Message: "Failed", Errors: errs, Status: st, Final: true}, nil); err != nil {
			return err
		}
		return status.Errorf(codes.Aborted, "%s %s: %s", verb, key, strings.Join(errs, "; "))
	}
	if err := send(&edgeproto.Progress{State: done, Message: st.Render(), Status: st, Final: true}, nil); err != nil {
		return err
	}
	if verb == "delete" {
		c.s.mu.Lock()
		c.s.remove(obj)
		c.s.mu.Unlock()
	}
	return nil
}

func states(verb string) (requested, working, done, failed edgeproto.TrackedState) {
	switch verb {
	case "create":
		return edgeproto.TrackedState_TRACKED_STATE_CREATE_REQUESTED, edgeproto.TrackedState_TRACKED_STATE_CREATING,
			edgeproto.TrackedState_TRACKED_STATE_READY, edgeproto.TrackedState_TRACKED_STATE_CREATE_ERROR
	case "update":
		return edgeproto.TrackedState_TRACKED_STATE_UPDATE_REQUESTED, edgeproto.TrackedState_TRACKED_STATE_UPDATING,
			edgeproto.TrackedState_TRACKED_STATE_READY, edgeproto.TrackedState_TRACKED_STATE_UPDATE_ERROR
	}
	return edgeproto.TrackedState_TRACKED_STATE_DELETE_REQUESTED, edgeproto.TrackedState_TRACKED_STATE_DELETING,
		edgeproto.TrackedState_TRACKED_STATE_DELETE_DONE, edgeproto.TrackedState_TRACKED_STATE_DELETE_ERROR
}

// setState records a progress step on obj (state and errors) and on its
// Info twin (state, errors, status); s.mu is held.
func (s *Server) setState(obj proto.Message, p *edgeproto.Progress) {
	set := func(m protoreflect.Message, name protoreflect.Name, v protoreflect.Value) {
		if fd := m.Descriptor().Fields().ByName(name); fd != nil {
			m.Set(fd, v)
		}
	}
	errList := func(m protoreflect.Message) protoreflect.Value {
		l := m.NewField(m.Descriptor().Fields().ByName("errors")).List()
		for _, e := range p.GetErrors() {
			l.Append(protoreflect.ValueOfString(e))
		}
		return protoreflect.ValueOfList(l)
	}
	m := obj.ProtoReflect()
	set(m, "state", protoreflect.ValueOfEnum(protoreflect.EnumNumber(p.GetState())))
	set(m, "errors", errList(m))
	s.put(obj)
	infoType, err := protoregistry.GlobalTypes.FindMessageByName(m.Descriptor().FullName() + "Info")
	if err != nil {
		return
	}
	info := infoType.New()
	set(info, "key", m.Get(m.Descriptor().Fields().ByName("key")))
	if fd := info.Descriptor().Fields().ByName("state"); fd != nil && fd.Enum().FullName() == "edgeproto.v1.TrackedState" {
		info.Set(fd, protoreflect.ValueOfEnum(protoreflect.EnumNumber(p.GetState())))
	}
	set(info, "errors", errList(info))
	if p.GetStatus() != nil {
		set(info, "status", protoreflect.ValueOfMessage(proto.Clone(p.GetStatus()).ProtoReflect()))
	}
	s.put(info.Interface())
}

func (c *call) show() error {
	filter := c.reqField("filter").Message().Interface()
	name := filter.ProtoReflect().Descriptor().FullName()
	c.s.mu.Lock()
	var match []proto.Message
	for _, key := range sortedKeys(c.s.objects[name]) {
		if m := c.s.objects[name][key]; matches(m.ProtoReflect(), filter.ProtoReflect()) {
			match = append(match, proto.Clone(m))
		}
	}
	c.s.mu.Unlock()
	for _, m := range match {
		if err := c.respondObject(m); err != nil {
			return err
		}
	}
	return nil
}

// matches reports whether every field set in filter is equal in m.
func matches(m, filter protoreflect.Message) bool {
	ok := true
	filter.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		if fd.Message() != nil && !fd.IsList() && !fd.IsMap() {
			ok = m.Has(fd) && matches(m.Get(fd).Message(), v.Message())
		} else {
			ok = m.Get(fd).Equal(v)
		}
		return ok
	})
	return ok
}

func (c *call) settingsReply(change func(proto.Message) error) error {
	c.s.mu.Lock()
	err := change(c.s.settings)
	out := proto.Clone(c.s.settings)
	c.s.mu.Unlock()
	if err != nil {
		return err
	}
	return c.respondObject(out)
}

func (c *call) updateSettings(stored proto.Message) error {
	obj, _ := c.object()
	fm, err := c.fieldMap(obj)
	if err != nil {
		return err
	}
	reference.CopyInFields(stored.ProtoReflect(), obj.ProtoReflect(), fm)
	return nil
}
