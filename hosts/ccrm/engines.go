package ccrm

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"

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
// properties, and a directory of its own under stateDir when stateDir is
// not "" (replicas that share a platform's state share stateDir).
func RegistryPlatforms(stateDir string, log *slog.Logger) PlatformFunc {
	return func(cl *edgeproto.Cloudlet) (executor.Platform, error) {
		cfg := platforms.Config{Logger: log, Properties: cl.GetEnvVars()}
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
	fp     string
	eng    *executor.Engine
	cancel context.CancelFunc
	done   chan struct{}
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

// engineFor returns the running engine of cl's platform, building the
// platform and starting an engine when there is none yet or when the
// cloudlet changed since; the engine it replaces finishes what it runs
// and stops.
func (r *Replica) engineFor(cl *edgeproto.Cloudlet) (*executor.Engine, error) {
	key := cl.GetKeyString()
	fp := fingerprint(cl)
	r.mu.Lock()
	defer r.mu.Unlock()
	if ce := r.engines[key]; ce != nil && ce.fp == fp {
		return ce.eng, nil
	}
	p, err := r.cfg.NewPlatform(cl)
	if err != nil {
		return nil, fmt.Errorf("ccrm: platform %q of cloudlet %s: %w", cl.GetPlatformType(), key, err)
	}
	eng, err := executor.New(executor.Config{
		Platform:         fencedPlatform{p: p},
		Objects:          r.objects,
		Reservations:     r.res,
		CloudletInfos:    reportSender(r, cloudletInfoReport),
		ClusterInstInfos: reportSender(r, clusterInfoReport),
		AppInstInfos:     reportSender(r, appInstInfoReport),
		Settings:         r.settings,
		Workers:          r.cfg.Workers,
		ReportRetry:      r.cfg.ReportRetry,
		Logger:           r.log.With(slog.String("cloudlet", key)),
	})
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(r.engCtx)
	ce := &cloudletEngine{fp: fp, eng: eng, cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(ce.done)
		_ = eng.Start(ctx)
	}()
	if old := r.engines[key]; old != nil {
		r.log.Info("cloudlet changed: new platform", slog.String("cloudlet", key), slog.String("platform", cl.GetPlatformType()))
		r.retire(old)
	}
	r.engines[key] = ce
	return eng, nil
}

// retire stops ce once what it runs is done.
func (r *Replica) retire(ce *cloudletEngine) {
	r.wg.Go(func() {
		_ = ce.eng.Wait(r.engCtx)
		ce.cancel()
		<-ce.done
	})
}

// retireGone retires the engines of cloudlets that no longer exist.
func (r *Replica) retireGone() {
	r.mu.Lock()
	defer r.mu.Unlock()
	for key, ce := range r.engines {
		if _, ok := r.cloudlets.Get(key); !ok {
			delete(r.engines, key)
			r.retire(ce)
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
