package provider

import (
	"context"
	"fmt"
	"math"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/edgekit/edgekit/fluidos"
	"github.com/edgekit/edgekit/internal/store"
	"github.com/edgekit/edgekit/platforms/local"
)

// Capacity is what a cloudlet can sell as a K8Slice.
type Capacity struct {
	// Architecture of the CPUs, for example "amd64".
	Architecture string
	// CPU in millicores, Memory and Storage in bytes, Pods a count.
	CPU, Memory, Storage, Pods int64
}

// CapacitySource reports a cloudlet's capacity.
type CapacitySource interface {
	Capacity(ctx context.Context) (Capacity, error)
}

// CapacityFunc adapts a function to CapacitySource.
type CapacityFunc func(ctx context.Context) (Capacity, error)

// Capacity calls f.
func (f CapacityFunc) Capacity(ctx context.Context) (Capacity, error) { return f(ctx) }

var _ CapacitySource = CapacityFunc(nil)

// LocalCapacity is this host's capacity as the local platform reads it
// (platforms/local.ReadHostFacts): every CPU, all memory, the free space of
// the filesystem holding dir, and pods pods.
func LocalCapacity(dir string, pods int64) CapacitySource {
	return CapacityFunc(func(context.Context) (Capacity, error) {
		hf, err := local.ReadHostFacts(dir)
		if err != nil {
			return Capacity{}, err
		}
		return Capacity{
			Architecture: hf.Arch,
			CPU:          int64(hf.CPUs) * 1000,
			Memory:       int64(min(hf.MemoryBytes, math.MaxInt64)),
			Storage:      int64(min(hf.DiskAvailableBytes, math.MaxInt64)),
			Pods:         pods,
		}, nil
	})
}

// K8SliceFlavorID and ServiceFlavorID name the provider's flavors.
func K8SliceFlavorID(nodeID string) string { return nodeID + "-k8slice" }

// ServiceFlavorID names the flavor of a blueprint.
func ServiceFlavorID(nodeID, blueprintID string) string { return nodeID + "-service-" + blueprintID }

// Sync publishes the provider's flavors from its capacity, its blueprints
// and what open transactions hold, in one store transaction: the K8Slice
// flavor offers the capacity minus every held partition, each Service
// flavor counts its held instances, the flavor of a deleted blueprint is
// withdrawn (deleted when nothing holds it, unavailable otherwise).
func (p *Provider) Sync(ctx context.Context) error {
	var capacity *Capacity
	if p.cfg.Capacity != nil {
		c, err := p.cfg.Capacity.Capacity(ctx)
		if err != nil {
			return fmt.Errorf("provider: reading capacity: %w", err)
		}
		capacity = &c
	}
	self := p.cfg.Self.GetNodeId()
	_, err := p.cfg.Store.Txn(ctx, func(tx *store.Tx) error {
		open, err := p.open.TxList(tx)
		if err != nil {
			return err
		}
		closed, err := p.txns.TxList(tx)
		if err != nil {
			return err
		}
		txns := append(open, closed...)
		held := map[string][]*fluidos.Configuration{}
		for _, t := range txns {
			if holds(t) {
				held[t.GetFlavorId()] = append(held[t.GetFlavorId()], t.GetConfiguration())
			}
		}
		current, err := p.flavors.TxList(tx)
		if err != nil {
			return err
		}
		existing := map[string]*fluidos.Flavor{}
		for _, f := range current {
			existing[f.GetId()] = f
		}
		want := map[string]*fluidos.Flavor{}
		if capacity != nil {
			f := p.k8sliceFlavor(*capacity)
			want[f.GetId()] = f
		}
		bps, err := p.blueprints.TxList(tx)
		if err != nil {
			return err
		}
		for _, bp := range bps {
			f := p.serviceFlavor(bp)
			want[f.GetId()] = f
		}
		for _, sf := range p.cfg.Flavors {
			f := proto.Clone(sf).(*fluidos.Flavor)
			b := p.base(f.GetId())
			f.Owner, f.ProviderId, f.Availability = b.GetOwner(), b.GetProviderId(), true
			if f.Location == nil {
				f.Location = b.GetLocation()
			}
			want[f.GetId()] = f
		}
		for id, f := range want {
			for _, h := range held[id] {
				take := proto.Clone(f).(*fluidos.Flavor)
				restoreNegated(take, h)
				f = take
			}
			if old := existing[id]; old != nil {
				f.CreatedAt = old.GetCreatedAt()
				if proto.Equal(withoutTimes(old), withoutTimes(f)) {
					continue
				}
			}
			f.UpdatedAt = timestamppb.Now()
			if f.CreatedAt == nil {
				f.CreatedAt = f.UpdatedAt
			}
			if err := p.flavors.TxPut(tx, f); err != nil {
				return err
			}
		}
		for id, f := range existing {
			if _, ok := want[id]; ok || f.GetOwner().GetNodeId() != self {
				continue
			}
			if len(held[id]) == 0 {
				p.flavors.TxDelete(tx, id)
			} else if f.GetAvailability() {
				f.Availability = false
				if err := p.flavors.TxPut(tx, f); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("provider: publishing flavors: %w", err)
	}
	return nil
}

// holds reports whether a transaction holds capacity: reserved, or bought
// (until allocation releases it).
func holds(t *fluidos.Transaction) bool {
	s := t.GetState()
	return s == fluidos.TransactionState_TRANSACTION_STATE_RESERVED || s == fluidos.TransactionState_TRANSACTION_STATE_PURCHASED
}

// restoreNegated takes what held holds out of f, without the checks of a
// new reservation (it was accepted when made).
func restoreNegated(f *fluidos.Flavor, held *fluidos.Configuration) {
	switch {
	case f.GetK8Slice() != nil && held.GetK8Slice() != nil:
		c, h := f.GetK8Slice().GetCharacteristics(), held.GetK8Slice()
		c.Cpu = max(c.GetCpu()-h.GetCpu(), 0)
		c.Memory = max(c.GetMemory()-h.GetMemory(), 0)
		c.Pods = max(c.GetPods()-h.GetPods(), 0)
		c.Storage = max(c.GetStorage()-h.GetStorage(), 0)
		if g := h.GetGpu(); g != nil && c.Gpu != nil {
			c.Gpu.Cores = max(c.Gpu.GetCores()-g.GetCores(), 0)
			c.Gpu.Memory = max(c.Gpu.GetMemory()-g.GetMemory(), 0)
		}
		f.Availability = sellable(f.GetK8Slice())
	case f.GetService() != nil:
		s := f.GetService()
		s.SoldInstances++
		f.Availability = s.GetMaxInstances() == 0 || s.GetSoldInstances() < s.GetMaxInstances()
	}
}

func withoutTimes(f *fluidos.Flavor) *fluidos.Flavor {
	c := proto.Clone(f).(*fluidos.Flavor)
	c.CreatedAt, c.UpdatedAt = nil, nil
	return c
}

func (p *Provider) base(id string) *fluidos.Flavor {
	return &fluidos.Flavor{
		Id:           id,
		Owner:        proto.Clone(p.cfg.Self).(*fluidos.NodeIdentity),
		ProviderId:   p.cfg.Self.GetNodeId(),
		Availability: true,
		Location:     p.cfg.Location,
	}
}

func (p *Provider) k8sliceFlavor(c Capacity) *fluidos.Flavor {
	f := p.base(K8SliceFlavorID(p.cfg.Self.GetNodeId()))
	f.Price = p.cfg.K8SlicePrice
	k := &fluidos.K8Slice{
		Characteristics:  &fluidos.K8SliceCharacteristics{Architecture: c.Architecture, Cpu: c.CPU, Memory: c.Memory, Pods: c.Pods, Storage: c.Storage},
		Partitionability: p.cfg.Policy,
		Properties:       &fluidos.K8SliceProperties{},
	}
	f.Spec = &fluidos.Flavor_K8Slice{K8Slice: k}
	f.Availability = sellable(k)
	return f
}

func (p *Provider) serviceFlavor(bp *fluidos.ServiceBlueprint) *fluidos.Flavor {
	f := p.base(ServiceFlavorID(p.cfg.Self.GetNodeId(), bp.GetId()))
	f.Price = bp.GetPrice()
	f.Spec = &fluidos.Flavor_Service{Service: &fluidos.Service{
		Name:                bp.GetName(),
		Description:         bp.GetDescription(),
		Category:            bp.GetCategory(),
		Tags:                bp.GetTags(),
		HostingPolicies:     bp.GetHostingPolicies(),
		ConfigurationSchema: bp.GetConfigurationSchema(),
		BlueprintId:         bp.GetId(),
		MaxInstances:        bp.GetMaxInstances(),
	}}
	return f
}
