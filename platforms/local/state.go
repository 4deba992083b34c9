package local

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/executor"
)

// File and directory names of the on-disk layout (see the package doc).
const (
	cloudletsDir    = "cloudlets"
	clustersDir     = "clusters"
	appsDir         = "apps"
	cloudletFile    = "cloudlet.json"
	clusterFile     = "cluster.json"
	appStateFile    = "state.json"
	stdoutLogFile   = "stdout.log"
	stderrLogFile   = "stderr.log"
	appWorkDir      = "work"
	stateFileFormat = 2
)

// Phases of a record: what the platform was doing when it last wrote it.
const (
	// phaseCreating: the cluster's record is written, its range not yet
	// (a cluster); ports are reserved and the launch is recorded, the
	// process may or may not have started and is not known healthy yet
	// (an application instance).
	phaseCreating = "creating"
	// phaseReady: created (a cluster); running and healthy (an instance).
	phaseReady = "ready"
	// phaseOff: an instance powered off, holding its ports.
	phaseOff = "off"
	// phaseDeleting: a cluster whose delete started.
	phaseDeleting = "deleting"
)

// fenced is the part of every record that holds the fence it was last
// written under (see executor.Fence): the greatest token of the claims
// that wrote it, 0 when none carried one.
type fenced struct {
	Fence int64 `json:"fence,omitempty"`
}

// stamp records token unless the record holds a greater one.
func (f *fenced) stamp(token int64) { f.Fence = max(f.Fence, token) }

// cloudletRecord marks an initialised cloudlet.
type cloudletRecord struct {
	fenced
	Format       int       `json:"format"`
	Organization string    `json:"organization"`
	Name         string    `json:"name"`
	InitAt       time.Time `json:"init_at"`
}

// clusterRecord is the state of a cluster: its key, phase and port range.
type clusterRecord struct {
	fenced
	Format       int       `json:"format"`
	Organization string    `json:"organization"`
	Name         string    `json:"name"`
	Phase        string    `json:"phase"`
	PortFirst    int       `json:"port_first,omitempty"`
	PortLast     int       `json:"port_last,omitempty"`
	CreatedAt    time.Time `json:"created_at"`
	// Quota is what the cluster's instances may request together; nil
	// for no limit.
	Quota *quota `json:"quota,omitempty"`
}

// mappedPort is one declared port of an application and where it is
// reached on this host.
type mappedPort struct {
	Proto     edgeproto.PortProtocol `json:"proto"`
	Internal  int32                  `json:"internal"`
	EndPort   int32                  `json:"end_port,omitempty"`
	Public    int32                  `json:"public"`
	PublicEnd int32                  `json:"public_end,omitempty"`
}

// appRecord is the state of an application instance. It is written before
// the process starts (Launch set, Pid 0: the intent), again once it runs
// (Pid, StartTime, Exe) and once it is healthy (phase ready). Launch is
// also in the process's marker, which ties a process found on the host to
// this record; StartTime is field 22 of /proc/<pid>/stat and BootID the
// kernel's boot id, so a reused pid never passes for the recorded process.
// Exe is the executable seen right after the start, for people reading
// the file: ownership never rests on it (the process may exec another
// program).
type appRecord struct {
	fenced
	Format       int    `json:"format"`
	Organization string `json:"organization"`
	Name         string `json:"name"`
	AppOrg       string `json:"app_organization,omitempty"`
	AppName      string `json:"app_name,omitempty"`
	AppVersion   string `json:"app_version,omitempty"`
	Phase        string `json:"phase"`
	// Created is true once the instance was ready (or powered off) once:
	// a later restart (an update) is not an interrupted create.
	Created    bool         `json:"created,omitempty"`
	Launch     string       `json:"launch"`
	Pid        int          `json:"pid,omitempty"`
	StartTime  uint64       `json:"start_time,omitempty"`
	BootID     string       `json:"boot_id,omitempty"`
	Exe        string       `json:"exe,omitempty"`
	StartedAt  time.Time    `json:"started_at,omitzero"`
	Ports      []int        `json:"ports"`
	Mapped     []mappedPort `json:"mapped"`
	ConfigHash string       `json:"config_hash"`
	// CPU (millicores) and Memory (bytes) the instance requests of its
	// cluster's quota, recorded with the launch's intent.
	CPU    int64 `json:"cpu_millis,omitempty"`
	Memory int64 `json:"memory_bytes,omitempty"`
}

// rel renders path relative to the state directory, so that errors and
// reports never carry where it is on the host.
func (p *Platform) rel(path string) string {
	if r, err := filepath.Rel(p.cfg.Root, path); err == nil && filepath.IsLocal(r) {
		return r
	}
	return filepath.Base(path)
}

// stateErr wraps a filesystem error in ErrState with the paths it names
// made relative to the state directory.
func (p *Platform) stateErr(what string, err error) error {
	var pe *fs.PathError
	var le *os.LinkError
	switch {
	case errors.As(err, &pe):
		return fmt.Errorf("%w: %s: %s %s: %w", ErrState, what, pe.Op, p.rel(pe.Path), pe.Err)
	case errors.As(err, &le):
		return fmt.Errorf("%w: %s: %s %s: %w", ErrState, what, le.Op, p.rel(le.New), le.Err)
	}
	return fmt.Errorf("%w: %s: %w", ErrState, what, err)
}

// readRecord decodes path into v; it returns false (and no error) when the
// file does not exist, and an ErrState error naming the file when it
// cannot be read or is not a record of this format.
func (p *Platform) readRecord(path string, v interface{ format() int }) (bool, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, p.stateErr("reading", err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		return false, fmt.Errorf("%w: %s is unreadable: %w", ErrState, p.rel(path), err)
	}
	if f := v.format(); f != stateFileFormat {
		return false, fmt.Errorf("%w: %s has format %d, this platform reads format %d", ErrState, p.rel(path), f, stateFileFormat)
	}
	return true, nil
}

func (r *cloudletRecord) format() int { return r.Format }
func (r *clusterRecord) format() int  { return r.Format }
func (r *appRecord) format() int      { return r.Format }

// writeRecord writes v to path atomically (temporary file, fsync,
// rename), readable by the owner only. The temporary file's name starts
// with "." and the record's name, then ".tmp" and this platform's tag.
// The caller holds the object's exclusive lock. The record is stamped with
// the fence ctx carries, or keeps the one on disk when that is greater;
// a write under a fence older than the one on disk is refused
// (executor.ErrFenced) and changes nothing.
func (p *Platform) writeRecord(ctx context.Context, path string, v interface{ stamp(int64) }) error {
	theirs, err := p.checkFence(ctx, path)
	if err != nil {
		return err
	}
	v.stamp(theirs)
	if f, ok := executor.FenceFrom(ctx); ok {
		v.stamp(f.Token)
	}
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("%w: %w", ErrState, err)
	}
	written := func() { p.at(hookTempWritten + filepath.Base(path)) }
	if err := writeFileVia(path, append(b, '\n'), p.tag, written); err != nil {
		return p.stateErr("writing", err)
	}
	return nil
}

// fenceOf returns the fence the record at path holds: 0 when it does not
// exist, holds none or cannot be read (an unreadable record is reported by
// the reads of the operation; it fences nothing).
func fenceOf(path string) int64 {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	var f fenced
	if json.Unmarshal(b, &f) != nil {
		return 0
	}
	return f.Fence
}

// checkFence refuses, with an error matching executor.ErrFenced, an
// operation under a fence older than the one the record at path holds,
// and returns that one. The caller holds the object's lock, so the
// record does not change until it is released.
func (p *Platform) checkFence(ctx context.Context, path string) (int64, error) {
	theirs := fenceOf(path)
	if f, ok := executor.FenceFrom(ctx); ok && theirs > f.Token {
		return theirs, fmt.Errorf("%w: %s was written under fence %d, this operation runs under %d (claim %s): a newer claim holds the object", executor.ErrFenced, p.rel(path), theirs, f.Token, f.Key)
	}
	return theirs, nil
}

// removeTemps removes from dir the temporary files of the records named
// in names that an interrupted write left (see writeRecord): an operation
// calls it on the directory of the object it works on, under the object's
// lock. Those of this platform's writes in progress are kept. A file that
// cannot be removed is logged, not an error: it hides nothing.
func (p *Platform) removeTemps(ctx context.Context, dir string, names ...string) {
	removed, err := removeTemps(dir, p.tag, names...)
	for _, n := range removed {
		p.log.InfoContext(ctx, "removed the temporary file of an interrupted write", "file", p.rel(filepath.Join(dir, n)))
	}
	if err != nil {
		p.log.WarnContext(ctx, "removing temporary files of interrupted writes", "error", p.stateErr("removing", err))
	}
}

// mkdir creates dir and its parents, owner-only.
func (p *Platform) mkdir(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return p.stateErr("creating directory", err)
	}
	return nil
}

// removeAll removes dir and everything under it.
func (p *Platform) removeAll(dir string) error {
	if err := os.RemoveAll(dir); err != nil {
		return p.stateErr("removing directory", err)
	}
	return nil
}

// exists reports whether path exists.
func (p *Platform) exists(path string) (bool, error) {
	_, err := os.Stat(path)
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, fs.ErrNotExist):
		return false, nil
	}
	return false, p.stateErr("reading", err)
}

// loc is where an object lives: its directory and its mark, the path of
// directory names from the cloudlet down ("<cloudlet>/<cluster>/<inst>")
// that the markers of its processes carry and that names its lock.
type loc struct {
	dir  string
	mark string
	file string // the name of the object's record in dir
}

// ancestors returns the marks of the objects above l, top-down: the locks
// an operation on l takes shared.
func (l loc) ancestors() []string {
	var out []string
	for i := 0; i < len(l.mark); i++ {
		if l.mark[i] == '/' {
			out = append(out, l.mark[:i])
		}
	}
	return out
}

// cloudletLoc is where a cloudlet lives.
func (p *Platform) cloudletLoc(k *edgeproto.CloudletKey) (loc, error) {
	n, err := cloudletDirName(k)
	if err != nil {
		return loc{}, err
	}
	return loc{dir: filepath.Join(p.cfg.Root, cloudletsDir, n), mark: n, file: cloudletFile}, nil
}

// clusterLoc is where a cluster lives, under its cloudlet.
func (p *Platform) clusterLoc(c *edgeproto.ClusterInst) (loc, error) {
	cl, err := p.cloudletLoc(c.GetCloudletKey())
	if err != nil {
		return loc{}, err
	}
	n, err := clusterDirName(c.GetKey())
	if err != nil {
		return loc{}, err
	}
	return loc{dir: filepath.Join(cl.dir, clustersDir, n), mark: cl.mark + "/" + n, file: clusterFile}, nil
}

// appLoc is where an application instance lives, under its cluster.
func (p *Platform) appLoc(c *edgeproto.ClusterInst, inst *edgeproto.AppInst) (loc, error) {
	cl, err := p.clusterLoc(c)
	if err != nil {
		return loc{}, err
	}
	n, err := appDirName(inst.GetKey())
	if err != nil {
		return loc{}, err
	}
	return loc{dir: filepath.Join(cl.dir, appsDir, n), mark: cl.mark + "/" + n, file: appStateFile}, nil
}

// begin starts an operation on the object l, which locate returned with
// err: it fails when err is set or the platform is closed, and otherwise
// takes the object's locks (see lock). Under them, it refuses an
// operation whose fence is older than the one the object's record holds
// (see checkFence): a stale claim holder never starts, stops or removes
// anything.
func (p *Platform) begin(ctx context.Context, l loc, err error) (func(), error) {
	if err != nil {
		return nil, err
	}
	if err := p.enter(); err != nil {
		return nil, err
	}
	p.at(hookBegin)
	unlock, err := p.lock(ctx, l)
	if err != nil {
		return nil, err
	}
	path := filepath.Join(l.dir, l.file)
	theirs, err := p.checkFence(ctx, path)
	if err == nil {
		err = p.raiseFence(ctx, path, theirs)
	}
	if err != nil {
		unlock()
		return nil, err
	}
	return unlock, nil
}

// raiseFence records the fence ctx carries in the record at path when it
// is greater than theirs (the record's), before the operation does
// anything, so that an operation that ends up writing nothing (an update
// with nothing to change, a failure) still fences off older claims. A
// missing or unreadable record is left alone. The caller holds the
// object's exclusive lock.
func (p *Platform) raiseFence(ctx context.Context, path string, theirs int64) error {
	f, ok := executor.FenceFrom(ctx)
	if !ok || f.Token <= theirs {
		return nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(b, &m) != nil || m == nil {
		return nil
	}
	m["fence"] = json.RawMessage(strconv.FormatInt(f.Token, 10))
	out, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return fmt.Errorf("%w: %w", ErrState, err)
	}
	if err := writeFileVia(path, append(out, '\n'), p.tag, nil); err != nil {
		return p.stateErr("writing", err)
	}
	return nil
}

// lock takes the locks of an operation on l: shared on its ancestors,
// exclusive on l.
func (p *Platform) lock(ctx context.Context, l loc) (func(), error) {
	return p.locks.lockPath(ctx, l.ancestors(), l.mark)
}

// lockShared takes shared locks on l and its ancestors: for reading.
func (p *Platform) lockShared(ctx context.Context, l loc) (func(), error) {
	return p.locks.lockPath(ctx, append(l.ancestors(), l.mark), "")
}
