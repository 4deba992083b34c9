package allocator

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"regexp"
	"slices"
	"strings"

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/executor"
	"github.com/edgekit/edgekit/fluidos"
	"github.com/edgekit/edgekit/fluidos/rear"
	"github.com/edgekit/edgekit/internal/devtls"
	"github.com/edgekit/edgekit/internal/quantity"
	"github.com/edgekit/edgekit/internal/store"
	"github.com/edgekit/edgekit/platforms/local"
)

// Bounds of what a buyer asks of a slice.
const (
	maxSliceBody  = 64 << 10
	maxSlicePorts = 16
	maxSliceArgs  = 64
	maxSliceEnv   = 64
	maxArgLen     = 4096
)

var (
	instanceName = regexp.MustCompile(`^[a-z][a-z0-9-]{0,39}$`)
	envName      = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,127}$`)
)

// errSlice is a refusal of a slice request, with its HTTP status.
type errSlice struct {
	code int
	msg  string
}

func (e *errSlice) Error() string { return e.msg }

func refuse(code int, format string, args ...any) error {
	return &errSlice{code: code, msg: fmt.Sprintf(format, args...)}
}

// SliceHandler serves the routes of the K8Slices the node sold
// (rear.RouteSliceInstances, rear.RouteSliceInstance): the buyer runs
// instances of the node's images on its slice. A request needs the
// slice's token (Authorization: Bearer) and, when secure is set, comes
// from the slice's buyer as its verified certificate says. An instance
// asks CPU and memory of the slice, which the platform checks against the
// slice's quota; a PUT or DELETE answers once the engine is done with it,
// or when the request ends.
func (a *Allocator) SliceHandler(secure bool) http.Handler {
	mux := http.NewServeMux()
	handle := func(pattern string, fn func(r *http.Request, al *fluidos.Allocation) (any, error)) {
		mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
			al, err := a.sliceAuth(r, secure)
			var out any
			if err == nil {
				out, err = fn(r, al)
			}
			a.answer(w, r, out, err)
		})
	}
	handle("GET "+rear.RouteSliceInstances, a.sliceList)
	handle("GET "+rear.RouteSliceInstance, func(r *http.Request, al *fluidos.Allocation) (any, error) {
		return a.sliceGet(r.Context(), al, r.PathValue("name"))
	})
	handle("PUT "+rear.RouteSliceInstance, a.slicePut)
	handle("DELETE "+rear.RouteSliceInstance, a.sliceDelete)
	return mux
}

func (a *Allocator) answer(w http.ResponseWriter, r *http.Request, out any, err error) {
	var se *errSlice
	switch {
	case errors.As(err, &se):
		http.Error(w, se.msg, se.code)
		return
	case err != nil:
		a.log.ErrorContext(r.Context(), "slice request failed", "method", r.Method, "path", r.URL.Path, "err", err)
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	var b []byte
	switch v := out.(type) {
	case *fluidos.SliceInstance:
		b, err = rear.MarshalProto(v)
	case *fluidos.ListSliceInstancesResponse:
		b, err = rear.MarshalProto(v)
	}
	if err != nil {
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(b)
}

// sliceAuth returns the allocation of the slice a request names, once the
// request proved it is the buyer's.
func (a *Allocator) sliceAuth(r *http.Request, secure bool) (*fluidos.Allocation, error) {
	peer := ""
	if secure {
		id, err := devtls.PeerFromRequest(r)
		if err != nil {
			return nil, refuse(http.StatusUnauthorized, "%v", err)
		}
		peer = id.Name
	}
	token, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok || token == "" {
		return nil, refuse(http.StatusUnauthorized, "the slice's token is required (Authorization: Bearer TOKEN)")
	}
	id := r.PathValue("sliceID")
	al, _, err := a.ledger.Allocations().Get(r.Context(), id)
	if errors.Is(err, store.ErrNotFound) || (err == nil && al.GetFlavorType() != fluidos.FlavorType_FLAVOR_TYPE_K8SLICE) {
		return nil, refuse(http.StatusNotFound, "no slice %q", id)
	}
	if err != nil {
		return nil, err
	}
	if peer != "" && peer != al.GetBuyer().GetNodeId() {
		return nil, refuse(http.StatusForbidden, "slice %q was bought by %q, not %q", id, al.GetBuyer().GetNodeId(), peer)
	}
	if ended(al) {
		return nil, refuse(http.StatusGone, "slice %q was released", id)
	}
	want, got := sha256.Sum256([]byte(al.GetCredentials().GetToken())), sha256.Sum256([]byte(token))
	if al.GetCredentials().GetToken() == "" || subtle.ConstantTimeCompare(want[:], got[:]) != 1 {
		return nil, refuse(http.StatusUnauthorized, "wrong token for slice %q", id)
	}
	return al, nil
}

// sliceInst is the key of a buyer's instance on a slice.
func sliceInst(al *fluidos.Allocation, name string) *edgeproto.AppInst {
	return &edgeproto.AppInst{Key: &edgeproto.AppInstKey{Organization: al.GetBuyer().GetNodeId(), Name: al.GetId() + "." + name}}
}

func (a *Allocator) slicePut(r *http.Request, al *fluidos.Allocation) (any, error) {
	if r.ContentLength > maxSliceBody { // refused before reading any of it
		return nil, refuse(http.StatusRequestEntityTooLarge, "an instance is at most %d bytes", maxSliceBody)
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxSliceBody+1))
	if err != nil {
		return nil, refuse(http.StatusBadRequest, "reading the request: %v", err)
	}
	if len(body) > maxSliceBody {
		return nil, refuse(http.StatusRequestEntityTooLarge, "an instance is at most %d bytes", maxSliceBody)
	}
	in := &fluidos.SliceInstance{}
	if err := rear.UnmarshalProto(body, in); err != nil {
		return nil, refuse(http.StatusBadRequest, "the body is not a SliceInstance: %v", err)
	}
	name := r.PathValue("name")
	if in.GetName() != "" && in.GetName() != name {
		return nil, refuse(http.StatusBadRequest, "the instance is named %q in the path and %q in the body", name, in.GetName())
	}
	in.Name = name
	app, err := a.sliceApp(al, in)
	if err != nil {
		return nil, err
	}
	inst, err := a.storeSliceInst(r.Context(), al, app)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(r.Context(), a.cfg.OperationTimeout)
	defer cancel()
	if err := a.run(ctx, inst.GetKeyString(), inst); err != nil && r.Context().Err() == nil && ctx.Err() == nil {
		return nil, err
	}
	return a.sliceGet(context.WithoutCancel(r.Context()), al, name)
}

// sliceApp checks what a buyer asks and makes the App of it.
func (a *Allocator) sliceApp(al *fluidos.Allocation, in *fluidos.SliceInstance) (*edgeproto.App, error) {
	var problems []string
	bad := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	if !instanceName.MatchString(in.GetName()) {
		bad("name %q: want 1 to 40 of a-z 0-9 -, starting with a letter", in.GetName())
	}
	path, err := a.catalog.path(in.GetImage())
	if err != nil {
		bad("%v", err)
	}
	if in.GetCpu() <= 0 || in.GetMemory() <= 0 {
		bad("cpu and memory are required (what the instance asks of the slice)")
	}
	if len(in.GetPorts()) > maxSlicePorts {
		bad("at most %d ports", maxSlicePorts)
	}
	if len(in.GetArgs()) > maxSliceArgs {
		bad("at most %d arguments", maxSliceArgs)
	}
	for _, arg := range in.GetArgs() {
		if len(arg) > maxArgLen || strings.ContainsRune(arg, 0) {
			bad("an argument is longer than %d bytes or holds a NUL", maxArgLen)
			break
		}
	}
	if len(in.GetEnv()) > maxSliceEnv {
		bad("at most %d environment variables", maxSliceEnv)
	}
	if p := in.GetHealthCheckPath(); p != "" && !strings.HasPrefix(p, "/") {
		bad("health check path %q: want an absolute path", p)
	}
	app := &edgeproto.App{
		Key:       &edgeproto.AppKey{Organization: al.GetBuyer().GetNodeId(), Name: al.GetId() + "." + in.GetName(), Version: "1"},
		ImageType: edgeproto.ImageType_IMAGE_TYPE_NONE, Deployment: "process", Command: path, Args: in.GetArgs(),
		ImagePath: in.GetImage(),
		Annotations: map[string]string{
			local.AnnotationCPU: quantity.FormatCPU(in.GetCpu()), local.AnnotationMemory: quantity.FormatBytes(in.GetMemory()),
		},
	}
	for _, name := range sortedKeys(in.GetEnv()) {
		if !envName.MatchString(name) || name == "PORT" || strings.HasPrefix(name, "PORT_") || name == local.MarkerEnv {
			bad("environment variable %q: not a name an instance may set", name)
			continue
		}
		app.EnvVars = append(app.EnvVars, &edgeproto.EnvVar{Name: name, Secret: true, SecretValue: in.GetEnv()[name]})
	}
	for _, p := range in.GetPorts() {
		proto, ok := map[string]edgeproto.PortProtocol{"": edgeproto.PortProtocol_PORT_PROTOCOL_TCP, "tcp": edgeproto.PortProtocol_PORT_PROTOCOL_TCP,
			"udp": edgeproto.PortProtocol_PORT_PROTOCOL_UDP, "http": edgeproto.PortProtocol_PORT_PROTOCOL_HTTP}[strings.ToLower(p.GetProtocol())]
		if !ok || p.GetPort() == 0 || p.GetPort() > 65535 {
			bad("port %d/%s: want 1-65535 and tcp, udp or http", p.GetPort(), p.GetProtocol())
			continue
		}
		app.Ports = append(app.Ports, &edgeproto.Port{Proto: proto, InternalPort: int32(p.GetPort())})
	}
	switch {
	case in.GetHealthCheckPath() != "" && len(app.Ports) > 0:
		app.HealthCheck, app.HealthCheckPath = edgeproto.HealthCheck_HEALTH_CHECK_HTTP, in.GetHealthCheckPath()
	case len(app.Ports) > 0:
		app.HealthCheck = edgeproto.HealthCheck_HEALTH_CHECK_TCP
	default:
		app.HealthCheck = edgeproto.HealthCheck_HEALTH_CHECK_NONE
	}
	if len(problems) > 0 {
		return nil, refuse(http.StatusBadRequest, "instance %q: %s", in.GetName(), strings.Join(problems, "; "))
	}
	return app, nil
}

// storeSliceInst stores the App and the instance a PUT asks for, as a
// create (or, for an instance that exists, an update) request, unless the
// slice is being released. It returns the instance to submit.
func (a *Allocator) storeSliceInst(ctx context.Context, al *fluidos.Allocation, app *edgeproto.App) (*edgeproto.AppInst, error) {
	mu := a.sliceLock(al.GetId())
	mu.Lock()
	defer mu.Unlock()
	cur, _, err := a.ledger.Allocations().Get(ctx, al.GetId())
	if err != nil {
		return nil, err
	}
	if s := cur.GetStatus().GetState(); cur.GetReleaseRequested() || (s != fluidos.AllocationState_ALLOCATION_STATE_ACTIVE && s != fluidos.AllocationState_ALLOCATION_STATE_DEGRADED) {
		return nil, refuse(http.StatusConflict, "slice %q is %s: nothing more runs on it", al.GetId(), strings.TrimPrefix(s.String(), "ALLOCATION_STATE_"))
	}
	want := sliceInst(al, strings.TrimPrefix(app.GetKey().GetName(), al.GetId()+"."))
	want.AppKey, want.ClusterKey, want.CloudletKey = app.GetKey(), clusterKey(al).GetKey(), a.cloudlet.GetKey()
	want.PowerState = edgeproto.PowerState_POWER_STATE_POWER_ON
	key := want.GetKeyString()
	old, _, err := a.objs.apps.Get(ctx, app.GetKeyString())
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return nil, err
	}
	changed := old == nil || !old.Equal(app)
	inst, _, err := a.objs.insts.Get(ctx, key)
	switch {
	case errors.Is(err, store.ErrNotFound):
		want.State = edgeproto.TrackedState_TRACKED_STATE_CREATE_REQUESTED
	case err != nil:
		return nil, err
	case inst.GetState() == edgeproto.TrackedState_TRACKED_STATE_CREATE_ERROR:
		want.State = edgeproto.TrackedState_TRACKED_STATE_CREATE_REQUESTED
	case inst.GetState() == edgeproto.TrackedState_TRACKED_STATE_READY || inst.GetState() == edgeproto.TrackedState_TRACKED_STATE_UPDATE_ERROR:
		if !changed && inst.GetState() == edgeproto.TrackedState_TRACKED_STATE_READY {
			return inst, nil
		}
		want.State = edgeproto.TrackedState_TRACKED_STATE_UPDATE_REQUESTED
	default:
		return nil, refuse(http.StatusConflict, "instance %q is %s: try again once it settles", app.GetKey().GetName(), stateName(inst.GetState()))
	}
	if changed {
		if _, err := a.objs.apps.Put(ctx, app); err != nil {
			return nil, err
		}
	}
	if _, err := a.objs.insts.Put(ctx, want); err != nil {
		return nil, err
	}
	return want, nil
}

func (a *Allocator) sliceDelete(r *http.Request, al *fluidos.Allocation) (any, error) {
	name := r.PathValue("name")
	view, err := a.sliceGet(r.Context(), al, name)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(r.Context(), a.cfg.OperationTimeout)
	defer cancel()
	inst := sliceInst(al, name)
	if err := ensureGone(ctx, a, a.instKind(), inst.GetKeyString()); err != nil {
		if ctx.Err() != nil {
			return a.sliceGet(context.WithoutCancel(r.Context()), al, name)
		}
		return nil, err
	}
	app := &edgeproto.App{Key: &edgeproto.AppKey{Organization: al.GetBuyer().GetNodeId(), Name: al.GetId() + "." + name, Version: "1"}}
	if _, err := a.objs.apps.Delete(ctx, app.GetKeyString(), nil); err != nil && !errors.Is(err, store.ErrNotFound) {
		return nil, err
	}
	view.Status = &fluidos.SliceInstanceStatus{State: stateName(edgeproto.TrackedState_TRACKED_STATE_DELETE_DONE)}
	return view, nil
}

func (a *Allocator) sliceList(r *http.Request, al *fluidos.Allocation) (any, error) {
	insts, _, err := a.objs.insts.List(r.Context())
	if err != nil {
		return nil, err
	}
	out := &fluidos.ListSliceInstancesResponse{}
	for _, in := range insts {
		id, own := ownerOf(in.GetKey().GetName())
		if id != al.GetId() || own || !instanceName.MatchString(strings.TrimPrefix(in.GetKey().GetName(), id+".")) {
			continue // not the slice's, or not the buyer's (the Secret of a service's credentials)
		}
		v, err := a.sliceGet(r.Context(), al, strings.TrimPrefix(in.GetKey().GetName(), id+"."))
		if err != nil {
			return nil, err
		}
		out.Instances = append(out.Instances, v)
	}
	return out, nil
}

// sliceGet is a buyer's instance as its seller sees it.
func (a *Allocator) sliceGet(ctx context.Context, al *fluidos.Allocation, name string) (*fluidos.SliceInstance, error) {
	key := sliceInst(al, name).GetKeyString()
	inst, _, err := a.objs.insts.Get(ctx, key)
	if errors.Is(err, store.ErrNotFound) {
		return nil, refuse(http.StatusNotFound, "no instance %q on slice %q", name, al.GetId())
	}
	if err != nil {
		return nil, err
	}
	app, _, err := a.objs.apps.Get(ctx, executor.KeyString(inst.GetAppKey()))
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return nil, err
	}
	info, _, err := a.objs.instInfos.Get(ctx, key)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return nil, err
	}
	out := &fluidos.SliceInstance{Name: name, Image: app.GetImagePath(), Args: app.GetArgs(), HealthCheckPath: app.GetHealthCheckPath()}
	out.Cpu, _ = quantity.CPU(app.GetAnnotations()[local.AnnotationCPU])
	out.Memory, _ = quantity.Bytes(app.GetAnnotations()[local.AnnotationMemory])
	rtPorts := info.GetRuntimeInfo().GetPorts()
	for i, p := range app.GetPorts() {
		sp := &fluidos.SlicePort{Port: uint32(p.GetInternalPort()), Protocol: strings.ToLower(strings.TrimPrefix(p.GetProto().String(), "PORT_PROTOCOL_"))}
		if i < len(rtPorts) && info.GetState() != edgeproto.TrackedState_TRACKED_STATE_CREATE_ERROR {
			sp.PublicPort = rtPorts[i]
		}
		out.Ports = append(out.Ports, sp)
	}
	st := info.GetStatus()
	msg := st.GetTaskName()
	if st.GetStepName() != "" {
		msg += ": " + st.GetStepName()
	}
	rt := info.GetRuntimeInfo()
	out.Status = &fluidos.SliceInstanceStatus{
		State: stateName(inst.GetState()), Errors: inst.GetErrors(), Host: info.GetUri(), Message: msg,
		Running: len(rt.GetPids())+len(rt.GetContainerIds()) > 0 && inst.GetState() == edgeproto.TrackedState_TRACKED_STATE_READY,
	}
	return out, nil
}

func stateName(s edgeproto.TrackedState) string {
	return strings.TrimPrefix(s.String(), "TRACKED_STATE_")
}

func sortedKeys(m map[string]string) []string {
	return slices.Sorted(maps.Keys(m))
}
