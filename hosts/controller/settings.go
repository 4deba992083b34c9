package controller

import (
	"context"
	"errors"
	"fmt"

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/internal/store"
	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// settingsStore keeps the region's single Settings object under
// /edgekit/<region>/Settings, as protojson like every object.
type settingsStore struct {
	cli  *clientv3.Client
	path string
}

func newSettingsStore(s *store.Store) *settingsStore {
	return &settingsStore{cli: s.Client(), path: s.Prefix() + "Settings"}
}

// get returns the settings and their ModRevision (0 when never written:
// the defaults).
func (s *settingsStore) get(ctx context.Context) (*edgeproto.Settings, int64, error) {
	resp, err := s.cli.Get(ctx, s.path)
	if err != nil {
		return nil, 0, err
	}
	out := &edgeproto.Settings{}
	if len(resp.Kvs) == 0 {
		return out, 0, nil
	}
	if err := (protojson.UnmarshalOptions{DiscardUnknown: true}).Unmarshal(resp.Kvs[0].Value, out); err != nil {
		return nil, 0, fmt.Errorf("settings at %s: %w: %w", s.path, store.ErrBadValue, err)
	}
	return out, resp.Kvs[0].ModRevision, nil
}

// modify applies fn to the settings with a compare-and-swap on their
// revision, retrying when another writer won.
func (s *settingsStore) modify(ctx context.Context, fn func(*edgeproto.Settings) error) (*edgeproto.Settings, error) {
	for range 16 {
		cur, rev, err := s.get(ctx)
		if err != nil {
			return nil, err
		}
		if err := fn(cur); err != nil {
			return nil, err
		}
		val, err := protojson.Marshal(cur)
		if err != nil {
			return nil, err
		}
		resp, err := s.cli.Txn(ctx).If(clientv3.Compare(clientv3.ModRevision(s.path), "=", rev)).
			Then(clientv3.OpPut(s.path, string(val))).Commit()
		if err != nil {
			return nil, err
		}
		if resp.Succeeded {
			return cur, nil
		}
	}
	return nil, fmt.Errorf("settings: %w", store.ErrConflict)
}

type settingsService struct {
	edgeproto.UnimplementedSettingsServiceServer
	c *Controller
}

func requireAdmin(ctx context.Context) error {
	p, err := principal(ctx)
	if err != nil {
		return err
	}
	if !p.Admin {
		return status.Error(codes.PermissionDenied, "only an admin may change the settings")
	}
	return nil
}

func (s *settingsService) UpdateSettings(ctx context.Context, req *edgeproto.UpdateSettingsRequest) (*edgeproto.UpdateSettingsResponse, error) {
	if err := requireAdmin(ctx); err != nil {
		return nil, err
	}
	src := req.GetSettings()
	if src == nil {
		return nil, invalidf("Settings: no settings in the request")
	}
	if len(req.GetFields()) == 0 {
		return nil, invalidf("Settings: update names no fields")
	}
	fm, err := src.FieldSchema().Parse(req.GetFields()...)
	if err != nil {
		return nil, invalidf("%v", err)
	}
	if err := checkSettings(src); err != nil {
		return nil, invalidf("Settings: %v", err)
	}
	out, err := s.c.settings.modify(ctx, func(cur *edgeproto.Settings) error {
		cur.CopyInFields(src, fm)
		return nil
	})
	if err != nil {
		return nil, apiError(err)
	}
	return &edgeproto.UpdateSettingsResponse{Settings: out}, nil
}

func (s *settingsService) ResetSettings(ctx context.Context, _ *edgeproto.ResetSettingsRequest) (*edgeproto.ResetSettingsResponse, error) {
	if err := requireAdmin(ctx); err != nil {
		return nil, err
	}
	out, err := s.c.settings.modify(ctx, func(cur *edgeproto.Settings) error {
		cur.Reset()
		return nil
	})
	if err != nil {
		return nil, apiError(err)
	}
	return &edgeproto.ResetSettingsResponse{Settings: out}, nil
}

func (s *settingsService) ShowSettings(ctx context.Context, _ *edgeproto.ShowSettingsRequest) (*edgeproto.ShowSettingsResponse, error) {
	if _, err := principal(ctx); err != nil {
		return nil, err
	}
	out, _, err := s.c.settings.get(ctx)
	if err != nil {
		return nil, apiError(err)
	}
	return &edgeproto.ShowSettingsResponse{Settings: out}, nil
}

// checkSettings refuses negative durations and counts.
func checkSettings(s *edgeproto.Settings) error {
	var bad error
	s.ProtoReflect().Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		if d, ok := v.Interface().(protoreflect.Message); ok && fd.Message().FullName() == "google.protobuf.Duration" {
			secs := d.Get(d.Descriptor().Fields().ByName("seconds")).Int()
			nanos := d.Get(d.Descriptor().Fields().ByName("nanos")).Int()
			if secs < 0 || nanos < 0 {
				bad = fmt.Errorf("%s is negative", fd.Name())
				return false
			}
		}
		return true
	})
	if bad != nil {
		return bad
	}
	if s.GetMaxConcurrentTasks() < 0 || s.GetMaxTrackedDmeClients() < 0 {
		return errors.New("counts may not be negative")
	}
	return nil
}
