package ccrm

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/executor"
	"github.com/edgekit/edgekit/internal/store"
	"github.com/edgekit/edgekit/platforms"
	"google.golang.org/protobuf/proto"
)

// PlatformFunc builds the platform of a cloudlet.
type PlatformFunc func(cloudlet *edgeproto.Cloudlet) (executor.Platform, error)

// RegistryPlatforms builds each cloudlet's platform from the platforms
// registry by its platform_type, with the cloudlet's env_vars as
// properties and its access_vars as access variables, and a directory of its own under stateDir when stateDir is
// not "" (replicas that share a platform's state share stateDir).
func RegistryPlatforms(stateDir string, log *slog.Logger) PlatformFunc {
	return func(cl *edgeproto.Cloudlet) (executor.Platform, error) {
		cfg := platforms.Config{Logger: log, Properties: cl.GetEnvVars(), AccessVars: cl.GetAccessVars()}
		if stateDir != "" {
			cfg.Dir = filepath.Join(stateDir, dirName(cl.GetKeyString()))
		}
		return platforms.New(cl.GetPlatformType(), cfg)
	}
}

// dirName turns a key string into a file name.
func dirName(key string) string {
	return strings.NewReplacer("/", "_", "=", "-", ",", "_").Replace(key)
}

// cloudletEngine is the engine of one cloudlet, on the platform built from
// the cloudlet as it was when fp was computed.
type cloudletEngine struct {
	fp       string
	eng      *executor.Engine
	platform executor.Platform
	cancel   context.CancelFunc
	done     chan struct{}
}

// fingerprint hashes what of a cloudlet its platform is built from:
// everything but its state, progress and bookkeeping fields.
func fingerprint(cl *edgeproto.Cloudlet) string {
	c := cl.Clone()
	c.State, c.Errors, c.CrmOverride = 0, nil, 0
	c.MaintenanceState, c.TrustPolicyState = 0, 0
	c.CreatedAt, c.UpdatedAt, c.Annotations = nil, nil, nil
	b, _ := proto.MarshalOptions{Deterministic: true}.Marshal(c)
	sum := sha256.Sum256(b)
	return string(sum[:])
}

// buildLock serialises the building of one cloudlet's engine.
func (r *Replica) buildLock(key string) *sync.Mutex {
	r.mu.Lock()
	defer r.mu.Unlock()
	l := r.builds[key]
	if l == nil {
		l = &sync.Mutex{}
		r.builds[key] = l
	}
	return l
}

// engineFor returns the running engine of cl's platform, building the
// platform and starting an engine when there is none yet or when the
// cloudlet changed since. The engine it replaces finishes what it runs and
// stops, and its platform is closed (when it is an io.Closer), before the
// new platform is built.
func (r *Replica) engineFor(cl *edgeproto.Cloudlet) (*executor.Engine, error) {
	key := cl.GetKeyString()
	fp := fingerprint(cl)
	l := r.buildLock(key)
	l.Lock()
	defer l.Unlock()
	r.mu.Lock()
	old := r.engines[key]
	if old != nil && old.fp == fp {
		r.mu.Unlock()
		return old.eng, nil
	}
	delete(r.engines, key)
	r.mu.Unlock()
	if old != nil {
		r.log.Info("cloudlet changed: new platform", slog.String("cloudlet", key), slog.String("platform", cl.GetPlatformType()))
		r.stopEngine(old, true)
	}
	p, err := r.cfg.NewPlatform(cl)
	if err != nil {
		return nil, fmt.Errorf("ccrm: platform %q of cloudlet %s: %w", cl.GetPlatformType(), key, err)
	}
	eng, err := executor.New(executor.Config{
		Platform:              fence(p),
		Objects:               r.objects,
		Reservations:          r.res,
		CloudletInfos:         reportSender(r, cloudletInfoReport),
		ClusterInstInfos:      reportSender(r, clusterInfoReport),
		AppInstInfos:          reportSender(r, appInstInfoReport),
		TrustPolicyExceptions: reportSender(r, tpeReport),
		ResourcesGuard:        r.resourcesGuard,
		Settings:              r.currentSettings(),
		Workers:               r.cfg.Workers,
		ReportRetry:           r.cfg.ReportRetry,
		Logger:                r.log.With(slog.String("cloudlet", key)),
	})
	if err != nil {
		closePlatform(p)
		return nil, err
	}
	ctx, cancel := context.WithCancel(r.engCtx)
	ce := &cloudletEngine{fp: fp, eng: eng, platform: p, cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(ce.done)
		_ = eng.Start(ctx)
	}()
	r.mu.Lock()
	r.engines[key] = ce
	r.mu.Unlock()
	return eng, nil
}

// stopEngine stops ce, after what it runs is done when drain is set, and
// closes its platform.
func (r *Replica) stopEngine(ce *cloudletEngine, drain bool) {
	if drain {
		_ = ce.eng.Wait(r.engCtx)
	}
	ce.cancel()
	<-ce.done
	closePlatform(ce.platform)
}

func closePlatform(p executor.Platform) {
	if c, ok := p.(io.Closer); ok {
		_ = c.Close()
	}
}

// retireGone stops the engines of cloudlets that no longer exist, once
// their work is done.
func (r *Replica) retireGone() {
	r.mu.Lock()
	defer r.mu.Unlock()
	for key, ce := range r.engines {
		if _, ok := r.cloudlets.Get(key); !ok {
			delete(r.engines, key)
			r.wg.Go(func() { r.stopEngine(ce, true) })
		}
	}
}

// storeGetter reads objects of one kind from etcd (linearizable reads), so
// that an operation sees what the controller last wrote, not what a
// lagging watch delivered.
func storeGetter[K proto.Message, V store.Object[V]](k *store.Kind[V]) executor.Getter[K, V] {
	return executor.GetterFunc[K, V](func(ctx context.Context, key K) (V, error) {
		ks := executor.KeyString(key)
		v, _, err := k.Get(ctx, ks)
		if errors.Is(err, store.ErrNotFound) {
			var zero V
			return zero, executor.NotFound(k.Name(), ks)
		}
		return v, err
	})
}

// storeLister lists the objects of one kind on a cloudlet from etcd.
func storeLister[V interface {
	store.Object[V]
	GetCloudletKey() *edgeproto.CloudletKey
}](k *store.Kind[V]) executor.Lister[V] {
	return executor.ListerFunc[V](func(ctx context.Context, cl *edgeproto.CloudletKey) ([]V, error) {
		all, _, err := k.List(ctx)
		if err != nil {
			return nil, err
		}
		var out []V
		for _, v := range all {
			if proto.Equal(v.GetCloudletKey(), cl) {
				out = append(out, v)
			}
		}
		return out, nil
	})
}
