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

// SpaceGuardConfig configures a SpaceGuard.
type SpaceGuardConfig struct {
	// Client reaches the cluster. Required.
	Client *clientv3.Client
	// Recover compacts, defragments and disarms the NOSPACE alarm once the
	// live data fits the quota again. Only for members this process owns
	// (an embedded one): compaction drops the key history of every user of
	// the cluster.
	Recover bool
	// Quota is the members' database quota, in bytes; required with
	// Recover. The alarm is disarmed once the live data is below nine
	// tenths of it, so that it does not fire again at the next write.
	Quota int64
	// Interval is how often the alarms are read; default
	// DefaultSpaceCheckInterval. Check asks for a look sooner.
	Interval time.Duration
	// Logger receives the alarm's changes and how to recover; nil
	// discards.
	Logger *slog.Logger
	// OnChange, when set, is called with true when the alarm is seen on
	// and false when it is seen off again (and once with the first state
	// seen, on or off). It must not block.
	OnChange func(noSpace bool)
}

// SpaceGuard follows etcd's NOSPACE alarm: while it is on, etcd refuses
// every write that adds data (puts, transactions with puts, lease grants)
// with ErrNoSpace, and still serves reads, deletes and compactions. The
// guard reports the alarm (OnChange, NoSpace, a log line saying how to
// recover) and, with Recover, brings the cluster back without a restart:
// it compacts the history, defragments the members and disarms the alarm
// as soon as the live data fits in the quota again (at once when the
// history was what filled it; after deletes otherwise).
type SpaceGuard struct {
	cfg   SpaceGuardConfig
	log   *slog.Logger
	nudge chan struct{}

	mu        sync.Mutex
	noSpace   bool
	known     bool
	defragged int64     // the revision the guard last compacted and defragmented at
	lastWarn  time.Time // when the guard last said the data still does not fit
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
	return &SpaceGuard{cfg: cfg, log: log, nudge: make(chan struct{}, 1)}, nil
}

// NoSpace reports whether the NOSPACE alarm was on at the last look.
func (g *SpaceGuard) NoSpace() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.noSpace
}

// Check asks the running guard to look at the alarms now (after a write
// failed with ErrNoSpace, say). It does not wait.
func (g *SpaceGuard) Check() {
	select {
	case g.nudge <- struct{}{}:
	default:
	}
}

// Start looks at the alarms every Interval, and when Check asks, until
// ctx ends; it returns nil then. Errors of etcd are logged and tried again
// at the next look.
func (g *SpaceGuard) Start(ctx context.Context) error {
	t := time.NewTicker(g.cfg.Interval)
	defer t.Stop()
	for {
		if err := g.look(ctx); err != nil && ctx.Err() == nil {
			g.log.Warn("etcd space guard", slog.Any("error", err))
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

func (g *SpaceGuard) look(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, lookTimeout)
	defer cancel()
	resp, err := g.cfg.Client.AlarmList(ctx)
	if err != nil {
		return fmt.Errorf("alarm list: %w", err)
	}
	var alarms []*pb.AlarmMember
	for _, a := range resp.Alarms {
		if a.Alarm == pb.AlarmType_NOSPACE {
			alarms = append(alarms, a)
		}
	}
	g.set(len(alarms) > 0)
	if len(alarms) == 0 || !g.cfg.Recover {
		return nil
	}
	return g.recover(ctx, alarms)
}

// set records the alarm's state, and logs and reports a change.
func (g *SpaceGuard) set(on bool) {
	g.mu.Lock()
	first, was := !g.known, g.noSpace
	g.noSpace, g.known = on, true
	g.mu.Unlock()
	if !first && was == on {
		return
	}
	switch {
	case on && g.cfg.Recover:
		g.log.Error("etcd NOSPACE alarm: the store reached its database quota; writes are refused, reads and deletes work. "+
			"To recover, delete objects that are no longer needed: the store is then compacted and defragmented and the alarm "+
			"disarmed, without a restart. Or stop, and start again with a larger quota (the disk must have room for it).",
			slog.String("quota", FormatBytes(g.cfg.Quota)))
	case on:
		g.log.Error("etcd NOSPACE alarm: the etcd cluster reached its database quota; writes are refused, reads and deletes work. " +
			"To recover, delete objects that are no longer needed, then compact and defragment the cluster and disarm the alarm " +
			"(etcdctl compact <revision>; etcdctl defrag --cluster; etcdctl alarm disarm), or raise the members' quota.")
	case !first:
		g.log.Info("etcd NOSPACE alarm cleared: writes are accepted again")
	}
	if g.cfg.OnChange != nil {
		g.cfg.OnChange(on)
	}
}

// fitsShare is the share of the quota (in tenths) the defragmented
// database must be under for the guard to disarm the alarm, so that the
// next write does not raise it again.
const fitsShare = 9

// warnEvery bounds how often the guard repeats that the data does not fit.
const warnEvery = time.Minute

// recover compacts the history and defragments every member, once per
// revision (under the alarm only deletes make new ones), and disarms the
// alarms once the database fits in the quota again.
func (g *SpaceGuard) recover(ctx context.Context, alarms []*pb.AlarmMember) error {
	cli := g.cfg.Client
	eps := cli.Endpoints()
	if len(eps) == 0 {
		return errors.New("recover: the client has no endpoints")
	}
	st, err := cli.Status(ctx, eps[0])
	if err != nil {
		return fmt.Errorf("recover: status: %w", err)
	}
	rev := st.Header.Revision
	g.mu.Lock()
	done := g.defragged == rev
	g.mu.Unlock()
	if done {
		return nil // nothing was deleted since the last try
	}
	if _, err := cli.Compact(ctx, rev, clientv3.WithCompactPhysical()); err != nil && !errors.Is(err, rpctypes.ErrCompacted) {
		return fmt.Errorf("recover: compact to revision %d: %w", rev, err)
	}
	// Compaction frees pages inside the database; only defragmentation
	// gives them back, and the quota counts the file's size.
	var size int64
	for _, ep := range eps {
		if _, err := cli.Defragment(ctx, ep); err != nil {
			return fmt.Errorf("recover: defragment %s: %w", ep, err)
		}
		st, err := cli.Status(ctx, ep)
		if err != nil {
			return fmt.Errorf("recover: status of %s: %w", ep, err)
		}
		size = max(size, st.DbSize)
	}
	g.mu.Lock()
	g.defragged = rev
	warn := time.Since(g.lastWarn) >= warnEvery
	g.mu.Unlock()
	if limit := g.cfg.Quota / 10 * fitsShare; size >= limit {
		if warn {
			g.mu.Lock()
			g.lastWarn = time.Now()
			g.mu.Unlock()
			g.log.Warn("etcd NOSPACE alarm stays on: the data does not fit in the quota after compaction and defragmentation; delete objects that are no longer needed",
				slog.String("database", FormatBytes(size)), slog.String("quota", FormatBytes(g.cfg.Quota)),
				slog.String("needed_below", FormatBytes(limit)))
		}
		return nil
	}
	for _, a := range alarms {
		if _, err := cli.AlarmDisarm(ctx, &clientv3.AlarmMember{MemberID: a.MemberID, Alarm: a.Alarm}); err != nil {
			return fmt.Errorf("recover: disarm the alarm of member %x: %w", a.MemberID, err)
		}
	}
	resp, err := cli.AlarmList(ctx)
	if err != nil {
		return fmt.Errorf("alarm list: %w", err)
	}
	on := false
	for _, a := range resp.Alarms {
		on = on || a.Alarm == pb.AlarmType_NOSPACE
	}
	g.set(on)
	return nil
}
