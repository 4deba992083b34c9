package provider

import (
	"errors"
	"fmt"

	"google.golang.org/protobuf/proto"

	"github.com/edgekit/edgekit/fluidos"
)

// take removes from flavor f what cfg asks and returns the flavor left and
// the configuration held (cfg made explicit: a K8Slice bought whole holds
// every quantity of the flavor). f is not modified. check validates a
// service configuration against the flavor's template.
func take(f *fluidos.Flavor, cfg *fluidos.Configuration, check func(*fluidos.Flavor, *fluidos.ServiceConfiguration) error) (left *fluidos.Flavor, held *fluidos.Configuration, err error) {
	if !f.GetAvailability() {
		return nil, nil, fmt.Errorf("%w: flavor %q is sold out", ErrSoldOut, f.GetId())
	}
	switch f.GetSpec().(type) {
	case *fluidos.Flavor_K8Slice:
		return takeK8Slice(f, cfg)
	case *fluidos.Flavor_Service:
		return takeService(f, cfg, check)
	}
	return nil, nil, fmt.Errorf("%w: %s flavors are not provisionable here", ErrNotSold, fluidos.FlavorTypeOf(f))
}

func takeK8Slice(f *fluidos.Flavor, cfg *fluidos.Configuration) (*fluidos.Flavor, *fluidos.Configuration, error) {
	have := f.GetK8Slice().GetCharacteristics()
	if cfg == nil {
		// Bought whole: everything left.
		left := proto.Clone(f).(*fluidos.Flavor)
		c := left.GetK8Slice().GetCharacteristics()
		all := &fluidos.K8SliceConfiguration{Cpu: have.GetCpu(), Memory: have.GetMemory(), Pods: have.GetPods(), Storage: have.GetStorage(), Gpu: proto.Clone(have.GetGpu()).(*fluidos.GPU)}
		if have.GetGpu() == nil {
			all.Gpu = nil
		}
		c.Cpu, c.Memory, c.Pods, c.Storage, c.Gpu = 0, 0, 0, 0, nil
		left.Availability = false
		return left, &fluidos.Configuration{Spec: &fluidos.Configuration_K8Slice{K8Slice: all}}, nil
	}
	kc := cfg.GetK8Slice()
	if kc == nil {
		return nil, nil, fmt.Errorf("%w: flavor %q is a K8Slice, the configuration is not", ErrBadRequest, f.GetId())
	}
	if f.GetK8Slice().GetPartitionability() == nil {
		return nil, nil, fmt.Errorf("%w: flavor %q is sold whole only: reserve it without configuration", ErrBadRequest, f.GetId())
	}
	left, _, err := fluidos.PartitionK8Slice(f, kc)
	if err != nil {
		if errors.Is(err, fluidos.ErrExceedsFlavor) {
			return nil, nil, fmt.Errorf("%w: %w", ErrSoldOut, err)
		}
		return nil, nil, fmt.Errorf("%w: %w", ErrBadRequest, err)
	}
	return left, cfg, nil
}

func takeService(f *fluidos.Flavor, cfg *fluidos.Configuration, check func(*fluidos.Flavor, *fluidos.ServiceConfiguration) error) (*fluidos.Flavor, *fluidos.Configuration, error) {
	if cfg != nil && cfg.GetService() == nil {
		return nil, nil, fmt.Errorf("%w: flavor %q is a Service, the configuration is not", ErrBadRequest, f.GetId())
	}
	sc := cfg.GetService()
	s := f.GetService()
	if p := sc.GetHostingPolicy(); p != fluidos.HostingPolicy_HOSTING_POLICY_UNSPECIFIED {
		ok := false
		for _, hp := range s.GetHostingPolicies() {
			ok = ok || hp == p
		}
		if !ok {
			return nil, nil, fmt.Errorf("%w: flavor %q does not offer hosting policy %s", ErrBadRequest, f.GetId(), p)
		}
	}
	if err := check(f, sc); err != nil {
		return nil, nil, fmt.Errorf("%w: %w", ErrBadRequest, err)
	}
	left := proto.Clone(f).(*fluidos.Flavor)
	ls := left.GetService()
	if ls.GetMaxInstances() > 0 {
		if ls.GetSoldInstances() >= ls.GetMaxInstances() {
			return nil, nil, fmt.Errorf("%w: flavor %q: all %d instances are sold", ErrSoldOut, f.GetId(), ls.GetMaxInstances())
		}
		ls.SoldInstances++
		left.Availability = ls.GetSoldInstances() < ls.GetMaxInstances()
	}
	if cfg == nil {
		cfg = &fluidos.Configuration{Spec: &fluidos.Configuration_Service{Service: &fluidos.ServiceConfiguration{}}}
	}
	return left, cfg, nil
}

// restore puts what held took back into flavor f (modified in place).
func restore(f *fluidos.Flavor, held *fluidos.Configuration) {
	switch {
	case f.GetK8Slice() != nil && held.GetK8Slice() != nil:
		k := f.GetK8Slice()
		if k.Characteristics == nil {
			k.Characteristics = &fluidos.K8SliceCharacteristics{}
		}
		c, h := k.Characteristics, held.GetK8Slice()
		c.Cpu += h.GetCpu()
		c.Memory += h.GetMemory()
		c.Pods += h.GetPods()
		c.Storage += h.GetStorage()
		if g := h.GetGpu(); g != nil {
			if c.Gpu == nil {
				c.Gpu = &fluidos.GPU{Model: g.GetModel()}
			}
			c.Gpu.Cores += g.GetCores()
			c.Gpu.Memory += g.GetMemory()
		}
		f.Availability = sellable(k)
	case f.GetService() != nil:
		s := f.GetService()
		if s.GetSoldInstances() > 0 {
			s.SoldInstances--
		}
		f.Availability = s.GetMaxInstances() == 0 || s.GetSoldInstances() < s.GetMaxInstances()
	}
}

// sellable reports whether a slice has at least one partition's worth left
// (the policy's minimums, and at least 1 of CPU, memory and pods).
func sellable(k *fluidos.K8Slice) bool {
	c, p := k.GetCharacteristics(), k.GetPartitionability()
	return c.GetCpu() >= max(p.GetCpuMin(), 1) && c.GetMemory() >= max(p.GetMemoryMin(), 1) && c.GetPods() >= max(p.GetPodsMin(), 1)
}
