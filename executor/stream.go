package executor

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/fieldmap"
	"google.golang.org/protobuf/proto"
)

// StreamMessage is one report in wire form, as a host that reports over a
// network stream (the CCRM, over gRPC) carries it: the Info marshalled and
// the flags with their list actions ("5.6", "3:add").
type StreamMessage struct {
	Info   []byte
	Fields []string
}

// Stream is a Sender that turns every report into a StreamMessage on a
// channel, and the receiving side that decodes the messages and applies
// them to a Cache. Send blocks while the channel is full (honouring its
// context), so reports are never dropped and keep their order.
type Stream[T Object[T]] struct {
	ch        chan StreamMessage
	closeOnce sync.Once
	newT      func() T
}

var _ Sender[*edgeproto.AppInstInfo] = (*Stream[*edgeproto.AppInstInfo])(nil)

// NewStream returns a stream buffering up to buffer messages.
func NewStream[T Object[T]](buffer int) *Stream[T] {
	var zero T
	mt := zero.ProtoReflect().Type()
	return &Stream[T]{
		ch:   make(chan StreamMessage, buffer),
		newT: func() T { return mt.New().Interface().(T) },
	}
}

// Send encodes a report and queues it on the stream.
func (s *Stream[T]) Send(ctx context.Context, info T, fields *fieldmap.FieldMap) error {
	b, err := proto.MarshalOptions{Deterministic: true}.Marshal(info)
	if err != nil {
		return fmt.Errorf("stream: marshal report: %w", err)
	}
	if fields == nil {
		fields = topLevel(schemaOf(info)) // every field, as in Cache.Apply
	}
	msg := StreamMessage{Info: b, Fields: encodeFields(fields)}
	select {
	case s.ch <- msg:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Messages is the receiving end of the stream.
func (s *Stream[T]) Messages() <-chan StreamMessage { return s.ch }

// Close ends the stream: Receive returns once the messages queued before
// are applied. Send must not be called after Close.
func (s *Stream[T]) Close() { s.closeOnce.Do(func() { close(s.ch) }) }

// Decode turns a StreamMessage back into a report. The flags are validated
// against T's schema: an unknown flag is an error that names it.
func (s *Stream[T]) Decode(msg StreamMessage) (T, *fieldmap.FieldMap, error) {
	info := s.newT()
	if err := proto.Unmarshal(msg.Info, info); err != nil {
		var zero T
		return zero, nil, fmt.Errorf("stream: unmarshal report: %w", err)
	}
	schema := schemaOf(info)
	if schema == nil {
		return info, fieldmap.Of(msg.Fields...), nil
	}
	fm, err := schema.Parse(msg.Fields...)
	if err != nil {
		var zero T
		return zero, nil, fmt.Errorf("stream: %w", err)
	}
	return info, fm, nil
}

// Receive applies the stream's messages to dst in order until the stream is
// closed (it returns nil) or ctx ends (it returns ctx.Err()).
func (s *Stream[T]) Receive(ctx context.Context, dst *Cache[T]) error {
	for {
		select {
		case msg, ok := <-s.ch:
			if !ok {
				return nil
			}
			info, fm, err := s.Decode(msg)
			if err != nil {
				return err
			}
			dst.Apply(info, fm)
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

func encodeFields(fm *fieldmap.FieldMap) []string {
	flags := fm.Fields()
	for i, f := range flags {
		if a := fm.ListAction(f); a != fieldmap.Replace {
			flags[i] = f + ":" + a.String()
		}
	}
	return flags
}

// topLevel returns a map of every top-level flag: applied with
// CopyInFields it makes the destination equal to the source, nil
// sub-messages included.
func topLevel(s *fieldmap.Schema) *fieldmap.FieldMap {
	if s == nil {
		return nil
	}
	fm := s.NewFieldMap()
	for _, f := range s.Fields() {
		if !strings.Contains(f.Flag, ".") {
			fm.Set(f.Flag)
		}
	}
	return fm
}

// schemaOf returns the generated field schema of a message, or nil.
func schemaOf(m proto.Message) *fieldmap.Schema {
	if s, ok := m.(interface{ FieldSchema() *fieldmap.Schema }); ok {
		return s.FieldSchema()
	}
	return nil
}
