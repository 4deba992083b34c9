package fake

import (
	"context"
	"fmt"
	"slices"
	"strconv"

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/executor"
)

// FirstPublicPort is the lowest public port the fake hands out.
const FirstPublicPort = 10000

// CreateAppInst implements executor.AppPlatform.
func (p *Platform) CreateAppInst(ctx context.Context, cluster *edgeproto.ClusterInst, app *edgeproto.App, inst *edgeproto.AppInst, res executor.Reservations, pr executor.Progress) (*edgeproto.AppInstRuntime, error) {
	key := executor.KeyString(inst)
	if err := p.enter(ctx, OpCreateAppInst, key); err != nil {
		return nil, err
	}
	clusterKey := executor.KeyString(cluster.GetKey())
	p.mu.Lock()
	crec, ok := p.clusters[clusterKey]
	if !ok {
		p.mu.Unlock()
		return nil, &MissingError{What: "cluster", Key: clusterKey}
	}
	cloudlet := crec.cloudlet
	rec, exists := p.apps[key]
	if exists {
		p.statsOf(key).Adopted++
	} else {
		rec = &appRec{cluster: clusterKey, cloudlet: cloudlet, power: edgeproto.PowerState_POWER_STATE_POWER_ON, creating: true,
			obj: &edgeproto.AppInst{Key: inst.GetKey().Clone(), AppKey: inst.GetAppKey().Clone(),
				ClusterKey: cluster.GetKey().Clone(), CloudletKey: inst.GetCloudletKey().Clone()}}
		p.apps[key] = rec
	}
	p.mu.Unlock()
	if exists {
		pr.Step("Adopting existing deployment")
	} else {
		pr.Step("Reserving ports")
	}
	ports, err := p.reservePorts(ctx, res, cloudlet, executor.OwnerOf(inst), len(app.GetPorts()))
	if err != nil {
		if !exists {
			p.mu.Lock()
			delete(p.apps, key)
			p.mu.Unlock()
		}
		return nil, err
	}
	p.mu.Lock()
	rec.ports = ports
	rec.env = envOf(app)
	p.mu.Unlock()
	if !exists {
		if err := p.faultAt(OpCreateAppInst, key, midway); err != nil {
			return nil, err // crashed half way: the record stays CREATING
		}
	}
	p.mu.Lock()
	if !exists {
		p.statsOf(key).Created++
	}
	rec.creating = false
	rt := runtimeOf(inst, rec)
	p.mu.Unlock()
	pr.Step("Deployment running")
	if err := p.fault(OpCreateAppInst, key); err != nil {
		return nil, err
	}
	return rt, nil
}

// UpdateAppInst implements executor.AppPlatform: it applies the power state
// inst asks for.
func (p *Platform) UpdateAppInst(ctx context.Context, _ *edgeproto.ClusterInst, _ *edgeproto.App, inst *edgeproto.AppInst, _ executor.Reservations, pr executor.Progress) (*edgeproto.AppInstRuntime, error) {
	key := executor.KeyString(inst)
	if err := p.enter(ctx, OpUpdateAppInst, key); err != nil {
		return nil, err
	}
	p.mu.Lock()
	rec, ok := p.apps[key]
	if !ok {
		p.mu.Unlock()
		return nil, &MissingError{What: "app instance", Key: key}
	}
	switch inst.PowerState {
	case edgeproto.PowerState_POWER_STATE_POWER_ON_REQUESTED:
		rec.power = edgeproto.PowerState_POWER_STATE_POWER_ON
	case edgeproto.PowerState_POWER_STATE_POWER_OFF_REQUESTED:
		rec.power = edgeproto.PowerState_POWER_STATE_POWER_OFF
	case edgeproto.PowerState_POWER_STATE_REBOOT_REQUESTED:
		rec.power = edgeproto.PowerState_POWER_STATE_POWER_ON
		rec.reboots++
	}
	p.statsOf(key).Updated++
	rt := runtimeOf(inst, rec)
	p.mu.Unlock()
	pr.Step("Deployment updated")
	if err := p.fault(OpUpdateAppInst, key); err != nil {
		return nil, err
	}
	return rt, nil
}

// DeleteAppInst implements executor.AppPlatform.
func (p *Platform) DeleteAppInst(ctx context.Context, cluster *edgeproto.ClusterInst, _ *edgeproto.App, inst *edgeproto.AppInst, res executor.Reservations, pr executor.Progress) error {
	key := executor.KeyString(inst)
	if err := p.enter(ctx, OpDeleteAppInst, key); err != nil {
		return err
	}
	p.mu.Lock()
	rec, ok := p.apps[key]
	cloudlet := executor.KeyString(inst.GetCloudletKey())
	if cloudlet == "" {
		cloudlet = executor.KeyString(cluster.GetCloudletKey())
	}
	if ok {
		cloudlet = rec.cloudlet
	}
	p.mu.Unlock()
	pr.Step("Releasing ports")
	owner := executor.OwnerOf(inst)
	if err := res.Update(ctx, cloudlet, func(set executor.ReservationSet) error {
		set.Release("", owner)
		return nil
	}); err != nil {
		return fmt.Errorf("fake: app instance %s: %w", key, err)
	}
	p.mu.Lock()
	if _, ok := p.apps[key]; ok {
		delete(p.apps, key)
		p.statsOf(key).Deleted++
	} else {
		p.statsOf(key).DeletedAbsent++
	}
	p.mu.Unlock()
	pr.Step("Deployment removed")
	return p.fault(OpDeleteAppInst, key)
}

// reservePorts holds n public ports for owner: the ones it holds already, or
// the lowest free ones.
func (p *Platform) reservePorts(ctx context.Context, res executor.Reservations, cloudlet, owner string, n int) ([]uint32, error) {
	if n == 0 {
		return nil, nil
	}
	var ports []uint32
	err := res.Update(ctx, cloudlet, func(set executor.ReservationSet) error {
		ports = ports[:0]
		held := set.Values(executor.ReservePort, owner)
		if len(held) == n {
			for _, v := range held {
				x, _ := strconv.ParseUint(v, 10, 32)
				ports = append(ports, uint32(x))
			}
			slices.Sort(ports)
			return nil
		}
		set.Release(executor.ReservePort, owner)
		for port := FirstPublicPort; port <= 65535 && len(ports) < n; port++ {
			v := strconv.Itoa(port)
			if set.Owner(executor.ReservePort, v) == "" {
				if err := set.Reserve(executor.ReservePort, v, owner); err != nil {
					return err
				}
				ports = append(ports, uint32(port))
			}
		}
		if len(ports) < n {
			return fmt.Errorf("fake: no free public ports on cloudlet %s: %w", cloudlet, executor.ErrInsufficientResources)
		}
		return nil
	})
	return ports, err
}

// envOf is the environment app gives its instances, secret values
// included.
func envOf(app *edgeproto.App) map[string]string {
	env := map[string]string{}
	for _, e := range app.GetEnvVars() {
		if e.GetSecret() {
			env[e.GetName()] = e.GetSecretValue()
		} else {
			env[e.GetName()] = e.GetValue()
		}
	}
	return env
}

func runtimeOf(inst *edgeproto.AppInst, rec *appRec) *edgeproto.AppInstRuntime {
	return &edgeproto.AppInstRuntime{
		ContainerIds: []string{"fake-" + inst.GetKey().GetName()},
		Ports:        slices.Clone(rec.ports),
	}
}
