// Package ccrmtest has what tests of the CCRM share: a fake platform that
// CCRM replica processes reach over loopback HTTP (so that every replica
// drives one platform, whose per-key counters expose duplicate work, and
// which fences calls by claim token as a real back end would), and the
// helpers that start replica processes.
package ccrmtest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/executor"
	"github.com/edgekit/edgekit/hosts/ccrm"
	"github.com/edgekit/edgekit/platforms"
	"github.com/edgekit/edgekit/platforms/fake"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
)

// RemoteType is the platform type of the remote fake platform, and
// PropURL the cloudlet env var (platform property) naming its server.
const (
	RemoteType = "fake-remote"
	PropURL    = "FAKE_REMOTE_URL"
)

func init() {
	platforms.Register(RemoteType, func(cfg platforms.Config) (executor.Platform, error) {
		u := cfg.Properties[PropURL]
		if u == "" {
			return nil, fmt.Errorf("%s: the cloudlet's env var %s must name the platform server", RemoteType, PropURL)
		}
		return NewRemote(u), nil
	})
}

// NewRemote returns a platform that drives the Server at url.
func NewRemote(url string) *Remote {
	return &Remote{url: url, client: &http.Client{Timeout: time.Minute}}
}

// ErrFenced is what the server answers a call made under a claim older
// than the newest it saw for the object.
var ErrFenced = errors.New("fenced: a newer claim works on this object")

// call is one platform call on the wire; objects are protojson.
type call struct {
	Op        fake.Op         `json:"op"`
	FenceKey  string          `json:"fence_key"`
	FenceRev  int64           `json:"fence_rev"`
	Cloudlet  json.RawMessage `json:"cloudlet,omitempty"`
	Cluster   json.RawMessage `json:"cluster,omitempty"`
	App       json.RawMessage `json:"app,omitempty"`
	AppInst   json.RawMessage `json:"app_inst,omitempty"`
	Objective string          `json:"objective,omitempty"` // the key fenced
}

type answer struct {
	Error   string          `json:"error,omitempty"`
	Fenced  bool            `json:"fenced,omitempty"`
	Cluster json.RawMessage `json:"cluster,omitempty"`
	Runtime json.RawMessage `json:"runtime,omitempty"`
	Info    json.RawMessage `json:"info,omitempty"`
}

func marshal(m proto.Message) json.RawMessage {
	if m == nil || !m.ProtoReflect().IsValid() {
		return nil
	}
	b, _ := protojson.Marshal(m)
	return b
}

func unmarshal(b json.RawMessage, m proto.Message) error {
	if len(b) == 0 {
		return nil
	}
	return protojson.Unmarshal(b, m)
}

// Server serves one fake platform to remote replicas. It fences: every
// call carries the claim it is made under, and a call whose token is older
// than the newest the server saw for the same object is refused before it
// does anything (ErrFenced).
type Server struct {
	// Platform is the fake platform every replica drives.
	Platform *fake.Platform
	res      executor.Reservations
	srv      *http.Server
	url      string

	mu      sync.Mutex
	newest  map[string]int64       // object key -> newest token
	objects map[string]*sync.Mutex // object key -> held while a call works on it
	fenced  int
	unclaim int
}

// NewServer serves p on a free loopback port, handing it res (the
// reservations every replica shares) on every call; Close stops it.
func NewServer(p *fake.Platform, res executor.Reservations) (*Server, error) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s := &Server{Platform: p, res: res, newest: map[string]int64{}, objects: map[string]*sync.Mutex{}, url: "http://" + lis.Addr().String()}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /call", s.handle)
	s.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = s.srv.Serve(lis) }()
	return s, nil
}

// URL is the server's address, for the cloudlet env var PropURL.
func (s *Server) URL() string { return s.url }

// Fenced returns how many calls the server refused for a stale token, and
// how many came without any.
func (s *Server) Fenced() (stale, unclaimed int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.fenced, s.unclaim
}

// Close stops the server.
func (s *Server) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return s.srv.Shutdown(ctx)
}

// noProgress drops the platform's steps: they are not carried back.
var noProgress = executor.ProgressFunc(func(string) {})

// lockObject serialises the calls on one object, as a back end that
// fences does: a call is admitted, and does its work, while no other call
// on the object runs, so a call admitted under an older token (its holder
// paused since) cannot interleave with the work of the claim's next
// holder; that one is admitted after it, or refused before it.
func (s *Server) lockObject(key string) func() {
	s.mu.Lock()
	l := s.objects[key]
	if l == nil {
		l = &sync.Mutex{}
		s.objects[key] = l
	}
	s.mu.Unlock()
	l.Lock()
	return l.Unlock
}

// admit records the call's token and says whether it may proceed.
func (s *Server) admit(c *call) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if c.FenceKey == "" {
		s.unclaim++
		return false
	}
	if c.FenceRev < s.newest[c.Objective] {
		s.fenced++
		return false
	}
	s.newest[c.Objective] = c.FenceRev
	return true
}

func (s *Server) handle(w http.ResponseWriter, r *http.Request) {
	var c call
	if err := json.NewDecoder(io.LimitReader(r.Body, 1<<20)).Decode(&c); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var (
		cl   = &edgeproto.Cloudlet{}
		ci   = &edgeproto.ClusterInst{}
		app  = &edgeproto.App{}
		inst = &edgeproto.AppInst{}
		ans  answer
	)
	for _, x := range []struct {
		b json.RawMessage
		m proto.Message
	}{{c.Cloudlet, cl}, {c.Cluster, ci}, {c.App, app}, {c.AppInst, inst}} {
		if err := unmarshal(x.b, x.m); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
	}
	ctx := r.Context()
	var err error
	defer s.lockObject(c.Objective)()
	if !s.admit(&c) {
		ans.Fenced = true
		err = fmt.Errorf("%s %s under claim %d: %w", c.Op, c.Objective, c.FenceRev, ErrFenced)
	} else {
		p := s.Platform
		switch c.Op {
		case fake.OpInitCloudlet:
			err = p.InitCloudlet(ctx, cl, s.res, noProgress)
		case fake.OpGatherCloudletInfo:
			info := &edgeproto.CloudletInfo{Key: cl.Key}
			err = p.GatherCloudletInfo(ctx, cl, info)
			ans.Info = marshal(info)
		case fake.OpCleanupCloudlet:
			err = p.CleanupCloudlet(ctx, cl, noProgress)
		case fake.OpCreateCluster:
			err = p.CreateCluster(ctx, cl, ci, s.res, noProgress)
		case fake.OpUpdateCluster:
			err = p.UpdateCluster(ctx, cl, ci, s.res, noProgress)
		case fake.OpDeleteCluster:
			err = p.DeleteCluster(ctx, cl, ci, s.res, noProgress)
		case fake.OpCreateAppInst, fake.OpUpdateAppInst:
			var rt *edgeproto.AppInstRuntime
			if c.Op == fake.OpCreateAppInst {
				rt, err = p.CreateAppInst(ctx, ci, app, inst, s.res, noProgress)
			} else {
				rt, err = p.UpdateAppInst(ctx, ci, app, inst, s.res, noProgress)
			}
			ans.Runtime = marshal(rt)
		case fake.OpDeleteAppInst:
			err = p.DeleteAppInst(ctx, ci, app, inst, s.res, noProgress)
		default:
			err = fmt.Errorf("%s: %w", c.Op, executor.ErrUnsupported)
		}
		ans.Cluster = marshal(ci)
	}
	if err != nil {
		ans.Error = err.Error()
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(&ans)
}

// Remote is the platform a replica drives: every call goes to the Server,
// with the fence of the claim in the call's context.
type Remote struct {
	url    string
	client *http.Client
}

var _ executor.Platform = (*Remote)(nil)

// Features implements executor.FeatureReporter.
func (r *Remote) Features() executor.Features {
	return executor.Features{PlatformType: RemoteType, SupportsMultiTenantCluster: true}
}

func (r *Remote) do(ctx context.Context, c *call, ans *answer) error {
	if f, ok := ccrm.FenceFrom(ctx); ok {
		c.FenceKey, c.FenceRev = f.Key, f.Revision
	}
	body, err := json.Marshal(c)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, r.url+"/call", bytes.NewReader(body))
	if err != nil {
		return err
	}
	resp, err := r.client.Do(req)
	if err != nil {
		return fmt.Errorf("%s: %s: %w", RemoteType, c.Op, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		return fmt.Errorf("%s: %s: %s: %s", RemoteType, c.Op, resp.Status, bytes.TrimSpace(b))
	}
	if err := json.NewDecoder(resp.Body).Decode(ans); err != nil {
		return fmt.Errorf("%s: %s: %w", RemoteType, c.Op, err)
	}
	switch {
	case ans.Fenced:
		return fmt.Errorf("%s: %w", ans.Error, ErrFenced)
	case ans.Error != "":
		return errors.New(ans.Error)
	}
	return nil
}

func (r *Remote) InitCloudlet(ctx context.Context, cl *edgeproto.Cloudlet, _ executor.Reservations, _ executor.Progress) error {
	return r.do(ctx, &call{Op: fake.OpInitCloudlet, Cloudlet: marshal(cl), Objective: cl.GetKeyString()}, &answer{})
}

func (r *Remote) GatherCloudletInfo(ctx context.Context, cl *edgeproto.Cloudlet, info *edgeproto.CloudletInfo) error {
	var ans answer
	if err := r.do(ctx, &call{Op: fake.OpGatherCloudletInfo, Cloudlet: marshal(cl), Objective: cl.GetKeyString()}, &ans); err != nil {
		return err
	}
	got := &edgeproto.CloudletInfo{}
	if err := unmarshal(ans.Info, got); err != nil {
		return err
	}
	got.Key = info.Key
	proto.Reset(info)
	proto.Merge(info, got)
	return nil
}

func (r *Remote) CleanupCloudlet(ctx context.Context, cl *edgeproto.Cloudlet, _ executor.Progress) error {
	return r.do(ctx, &call{Op: fake.OpCleanupCloudlet, Cloudlet: marshal(cl), Objective: cl.GetKeyString()}, &answer{})
}

func (r *Remote) cluster(ctx context.Context, op fake.Op, cl *edgeproto.Cloudlet, ci *edgeproto.ClusterInst) error {
	var ans answer
	if err := r.do(ctx, &call{Op: op, Cloudlet: marshal(cl), Cluster: marshal(ci), Objective: ci.GetKeyString()}, &ans); err != nil {
		return err
	}
	got := &edgeproto.ClusterInst{}
	if err := unmarshal(ans.Cluster, got); err != nil {
		return err
	}
	ci.Resources = got.Resources
	return nil
}

func (r *Remote) CreateCluster(ctx context.Context, cl *edgeproto.Cloudlet, ci *edgeproto.ClusterInst, _ executor.Reservations, _ executor.Progress) error {
	return r.cluster(ctx, fake.OpCreateCluster, cl, ci)
}

func (r *Remote) UpdateCluster(ctx context.Context, cl *edgeproto.Cloudlet, ci *edgeproto.ClusterInst, _ executor.Reservations, _ executor.Progress) error {
	return r.cluster(ctx, fake.OpUpdateCluster, cl, ci)
}

func (r *Remote) DeleteCluster(ctx context.Context, cl *edgeproto.Cloudlet, ci *edgeproto.ClusterInst, _ executor.Reservations, _ executor.Progress) error {
	return r.cluster(ctx, fake.OpDeleteCluster, cl, ci)
}

func (r *Remote) app(ctx context.Context, op fake.Op, ci *edgeproto.ClusterInst, app *edgeproto.App, inst *edgeproto.AppInst) (*edgeproto.AppInstRuntime, error) {
	var ans answer
	if err := r.do(ctx, &call{Op: op, Cluster: marshal(ci), App: marshal(app), AppInst: marshal(inst), Objective: inst.GetKeyString()}, &ans); err != nil {
		return nil, err
	}
	if len(ans.Runtime) == 0 {
		return nil, nil
	}
	rt := &edgeproto.AppInstRuntime{}
	return rt, unmarshal(ans.Runtime, rt)
}

func (r *Remote) CreateAppInst(ctx context.Context, ci *edgeproto.ClusterInst, app *edgeproto.App, inst *edgeproto.AppInst, _ executor.Reservations, _ executor.Progress) (*edgeproto.AppInstRuntime, error) {
	return r.app(ctx, fake.OpCreateAppInst, ci, app, inst)
}

func (r *Remote) UpdateAppInst(ctx context.Context, ci *edgeproto.ClusterInst, app *edgeproto.App, inst *edgeproto.AppInst, _ executor.Reservations, _ executor.Progress) (*edgeproto.AppInstRuntime, error) {
	return r.app(ctx, fake.OpUpdateAppInst, ci, app, inst)
}

func (r *Remote) DeleteAppInst(ctx context.Context, ci *edgeproto.ClusterInst, app *edgeproto.App, inst *edgeproto.AppInst, _ executor.Reservations, _ executor.Progress) error {
	_, err := r.app(ctx, fake.OpDeleteAppInst, ci, app, inst)
	return err
}

func (r *Remote) UpdateTrustPolicy(context.Context, *edgeproto.Cloudlet, *edgeproto.TrustPolicy) error {
	return fmt.Errorf("%s: trust policies: %w", RemoteType, executor.ErrUnsupported)
}

func (r *Remote) UpdateTrustPolicyException(context.Context, *edgeproto.Cloudlet, *edgeproto.TrustPolicyException, *edgeproto.ClusterKey, *edgeproto.AppInstKey) error {
	return fmt.Errorf("%s: trust policies: %w", RemoteType, executor.ErrUnsupported)
}

func (r *Remote) DeleteTrustPolicyException(context.Context, *edgeproto.Cloudlet, *edgeproto.TrustPolicyExceptionKey, *edgeproto.ClusterKey, *edgeproto.AppInstKey) error {
	return fmt.Errorf("%s: trust policies: %w", RemoteType, executor.ErrUnsupported)
}
