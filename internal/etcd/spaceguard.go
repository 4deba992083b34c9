package etcd

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// DefaultSpaceCheckInterval is how often a SpaceGuard looks at the alarms
// when SpaceGuardConfig.Interval is zero.
const DefaultSpaceCheckInterval = 5 * time.Second

// Shares of the quota, in percent, that a SpaceGuard works with: a
// database file at FullPercent of the quota or more is Full; the guard
// disarms the NOSPACE alarm, and Full ends, once it is below FitPercent,
// so that neither comes back at the next write.
const (
	FullPercent = 95
	FitPercent  = 90
)

// SpaceGuardConfig configures a SpaceGuard.
type SpaceGuardConfig struct {
	// Client reaches the cluster. Required.
	Client *clientv3.Client
	// Recover compacts, defragments and disarms the NOSPACE alarm once the
	// data fits the quota again. Only for members this process owns (an
	// embedded one): compaction drops the key history of every user of
	// the cluster.
	Recover bool
	// Quota is the members' database quota, in bytes; required with
	// Recover. Without it the guard does not tell Full.
	Quota int64
	// Interval is how often the guard looks; default
	// DefaultSpaceCheckInterval. Check asks for a look sooner.
	Interval time.Duration
	// Logger receives the alarm's changes and how to recover; nil
	// discards.
	Logger *slog.Logger
	// Observe, when set, is called after every look with what the guard
	// saw. It must not block.
	Observe func(SpaceState)
}

// SpaceState is what a SpaceGuard saw.
type SpaceState struct {
	// NoSpace: etcd's NOSPACE alarm is on; etcd refuses every write that
	// adds data.
	NoSpace bool
	// Full: the database file is at FullPercent of the quota or more (and
	// has not gone below FitPercent since). Etcd still takes writes, but
	// few: an owner that refuses writes which add data now keeps room for
	// the writes that delete (a state change that requests a deletion,
	// say), which the alarm would refuse too.
	Full bool
	// DBSize is the size of the largest database file of the members, in
	// bytes; 0 when the guard could not read it.
	DBSize int64
	// Quota is SpaceGuardConfig.Quota.
	Quota int64
}

// SpaceGuard follows etcd's NOSPACE alarm and the database's size: while
// the alarm is on, etcd refuses every write that adds data (puts,
// transactions with puts, lease grants) with ErrNoSpace, and still serves
// reads, deletes and compactions. The guard reports the alarm (Observe,
// State, a log line saying how to recover) and, with Recover, brings the
// cluster back without a restart: while the alarm is on or the database
// is Full, it compacts the history, defragments the members once that
// makes room, and disarms the alarm once the database fits in FitPercent
// of the quota (at once when history filled it; after deletes otherwise).
type SpaceGuard struct {
	cfg   SpaceGuardConfig
	log   *slog.Logger
	nudge chan struct{}

	mu         sync.Mutex
	state      SpaceState
	known      bool
	compacted  int64     // the revision the guard last compacted to
	defragged  int64     // the compacted revision the guard last defragmented at
	lastDefrag time.Time // when it did
	lastWarn   time.Time // when the guard last said the data still does not fit
}

// NewSpaceGuard returns a guard; Start runs it.
func NewSpaceGuard(cfg SpaceGuardConfig) (*SpaceGuard, error) {
	if cfg.Client == nil {
		return nil, errors.New("etcd space guard: no client")
	}
	if cfg.Recover && cfg.Quota <= 0 {
		return nil, errors.New("etcd space guard: recovering needs the database quota")
	}
	if cfg.Interval <= 0 {
		cfg.Interval = DefaultSpaceCheckInterval
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &SpaceGuard{cfg: cfg, log: log, nudge: make(chan struct{}, 1), state: SpaceState{Quota: cfg.Quota}}, nil
}

// State returns what the guard saw at its last look.
func (g *SpaceGuard) State() SpaceState {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.state
}

// NoSpace reports whether the NOSPACE alarm was on at the last look.
func (g *SpaceGuard) NoSpace() bool { return g.State().NoSpace }

// Check asks the running guard to look now (after a write failed with
// ErrNoSpace, say). It does not wait.
func (g *SpaceGuard) Check() {
	select {
	case g.nudge <- struct{}{}:
	default:
	}
}

// Start looks every Interval, and when Check asks, until ctx ends; it
// returns nil then. Errors of etcd are logged and tried again at the next
// look.
func (g *SpaceGuard) Start(ctx context.Context) error {
	t := time.NewTicker(g.cfg.Interval)
	defer t.Stop()
	var lastErr string
	var lastLog time.Time
	for {
		// An error is logged when it changes, and at most once a minute
		// while it lasts (a cluster that refuses us the alarms, say).
		if err := g.look(ctx); err != nil && ctx.Err() == nil {
			if err.Error() != lastErr || time.Since(lastLog) >= warnEvery {
				g.log.Warn("etcd space guard", slog.Any("error", err))
				lastErr, lastLog = err.Error(), time.Now()
			}
		} else if err == nil {
			lastErr = ""
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		case <-g.nudge:
		}
	}
}

// lookTimeout bounds one look, recovery included.
const lookTimeout = 30 * time.Second

// warnEvery bounds how often the guard repeats a warning.
const warnEvery = time.Minute

// defragEvery bounds how often the guard defragments a Full database
// without the alarm whose pages in use do not show room yet.
const defragEvery = 30 * time.Second

// members is what the guard reads of the members.
type members struct {
	rev          int64 // the cluster's revision
	size, inUse  int64 // of the largest database
	alarms       []*pb.AlarmMember
	alarmsListed bool
}

func (g *SpaceGuard) read(ctx context.Context) (members, error) {
	var m members
	resp, err := g.cfg.Client.AlarmList(ctx)
	if err != nil {
		return m, fmt.Errorf("alarm list: %w", err)
	}
	for _, a := range resp.Alarms {
		if a.Alarm == pb.AlarmType_NOSPACE {
			m.alarms = append(m.alarms, a)
		}
	}
	m.alarmsListed = true
	for _, ep := range g.cfg.Client.Endpoints() {
		st, err := g.cfg.Client.Status(ctx, ep)
		if err != nil {
			return m, fmt.Errorf("status of %s: %w", ep, err)
		}
		m.rev = max(m.rev, st.Header.Revision)
		if st.DbSize > m.size {
			m.size, m.inUse = st.DbSize, st.DbSizeInUse
		}
	}
	return m, nil
}

func (g *SpaceGuard) look(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, lookTimeout)
	defer cancel()
	m, err := g.read(ctx)
	if !m.alarmsListed {
		return err
	}
	g.set(m)
	if err != nil || !g.cfg.Recover {
		return err
	}
	// Tell what recovery changed.
	after, err := g.recover(ctx, m)
	if after.alarmsListed && (len(after.alarms) != len(m.alarms) || after.size != m.size) {
		g.set(after)
	}
	return err
}

// set records what a look saw, and logs and reports it.
func (g *SpaceGuard) set(m members) {
	q := g.cfg.Quota
	g.mu.Lock()
	first, was := !g.known, g.state
	size := m.size
	if size == 0 {
		size = was.DBSize // not read this time: keep what we knew
	}
	full := q > 0 && size > 0 && (size >= q/100*FullPercent || (was.Full && size >= q/100*FitPercent))
	g.state = SpaceState{NoSpace: len(m.alarms) > 0, Full: full, DBSize: size, Quota: q}
	g.known = true
	now := g.state
	g.mu.Unlock()
	g.logChange(first, was, now)
	if g.cfg.Observe != nil {
		g.cfg.Observe(now)
	}
}

func (g *SpaceGuard) logChange(first bool, was, now SpaceState) {
	size := slog.String("database", FormatBytes(now.DBSize))
	quota := slog.String("quota", FormatBytes(now.Quota))
	if now.NoSpace && (first || !was.NoSpace) {
		if g.cfg.Recover {
			g.log.Error("etcd NOSPACE alarm: the store reached its database quota; writes are refused, reads and deletes work. "+
				"To recover, delete objects that are no longer needed: the store is then compacted and defragmented and the alarm "+
				"disarmed, without a restart. Or stop, and start again with a larger quota (the disk must have room for it).", size, quota)
		} else {
			g.log.Error("etcd NOSPACE alarm: the etcd cluster reached its database quota; writes are refused, reads and deletes work. "+
				"To recover, delete objects that are no longer needed, then compact and defragment the cluster and disarm the alarm "+
				"(etcdctl compact <revision>; etcdctl defrag --cluster; etcdctl alarm disarm), or raise the members' quota.", size)
		}
	}
	if !now.NoSpace && was.NoSpace && !first {
		g.log.Info("etcd NOSPACE alarm cleared: writes are accepted again", size, quota)
	}
	if now.Full && !now.NoSpace && (first || !was.Full) {
		g.log.Warn(fmt.Sprintf("the store's database is nearly full (%d%% of its quota or more): writes that add data are refused, "+
			"reads and deletes work. Delete objects that are no longer needed: the store is then compacted and defragmented.", FullPercent), size, quota)
	}
	if !now.Full && was.Full && !first {
		g.log.Info("the store's database has room again", size, quota)
	}
}

// recover, while the alarm is on or the database is Full, compacts the
// history (once per revision), defragments the members once that makes
// room, and disarms the alarm once the database fits. It returns what the
// members look like afterwards.
func (g *SpaceGuard) recover(ctx context.Context, m members) (members, error) {
	q := g.cfg.Quota
	g.mu.Lock()
	full, compacted, defragged, lastDefrag := g.state.Full, g.compacted, g.defragged, g.lastDefrag
	g.mu.Unlock()
	noSpace := len(m.alarms) > 0
	if !noSpace && !full && m.size < q/100*FullPercent {
		return m, nil
	}
	if m.rev > compacted {
		if _, err := g.cfg.Client.Compact(ctx, m.rev, clientv3.WithCompactPhysical()); err != nil && !errors.Is(err, rpctypes.ErrCompacted) {
			return m, fmt.Errorf("compact to revision %d: %w", m.rev, err)
		}
		compacted = m.rev
		g.mu.Lock()
		g.compacted = compacted
		g.mu.Unlock()
		after, err := g.read(ctx)
		if err != nil {
			return m, err
		}
		m = after
	}
	// Compaction frees pages inside the database file; only
	// defragmentation gives them back, and the quota counts the file. The
	// pages in use show freed only a write or two after the compaction:
	// under the alarm, where few writes come, defragment once per revision
	// (only deletes make new ones); when Full, once the pages in use fit,
	// or at most every defragEvery. A revision counts once compacted: what
	// was deleted after the compaction is still in the history.
	fit := q / 100 * FitPercent
	if m.size >= fit && compacted != defragged && (noSpace || m.inUse < fit || time.Since(lastDefrag) >= defragEvery) {
		for _, ep := range g.cfg.Client.Endpoints() {
			if _, err := g.cfg.Client.Defragment(ctx, ep); err != nil {
				return m, fmt.Errorf("defragment %s: %w", ep, err)
			}
		}
		g.mu.Lock()
		g.defragged, g.lastDefrag = compacted, time.Now()
		g.mu.Unlock()
		after, err := g.read(ctx)
		if err != nil {
			return m, err
		}
		m = after
	}
	if m.size >= fit {
		g.mu.Lock()
		warn := time.Since(g.lastWarn) >= warnEvery
		if warn {
			g.lastWarn = time.Now()
		}
		g.mu.Unlock()
		if warn {
			g.log.Warn("the store's data does not fit in its quota after compaction; delete objects that are no longer needed",
				slog.String("database", FormatBytes(m.size)), slog.String("in_use", FormatBytes(m.inUse)),
				slog.String("quota", FormatBytes(q)), slog.String("needed_below", FormatBytes(fit)))
		}
		return m, nil
	}
	if len(m.alarms) == 0 {
		return m, nil
	}
	g.set(m) // an alarm raised during this look is told before it is disarmed
	for _, a := range m.alarms {
		if _, err := g.cfg.Client.AlarmDisarm(ctx, &clientv3.AlarmMember{MemberID: a.MemberID, Alarm: a.Alarm}); err != nil {
			return m, fmt.Errorf("disarm the alarm of member %x: %w", a.MemberID, err)
		}
	}
	return g.read(ctx)
}
