package fluidos

import (
	"errors"
	"fmt"

	"google.golang.org/protobuf/proto"
)

// PartitionK8Slice splits off the Kubernetes slice flavor f the partition
// cfg asks for, within f's Partitionability policy. It returns:
//
//   - remaining: a copy of f with the partition's quantities subtracted
//     (CPU, memory, pods, storage, and GPU cores and memory; the GPU is
//     dropped when none is left). Its Availability is cleared when what is
//     left is below the policy's minimum of CPU, memory or pods, since no
//     further partition fits;
//   - partition: a copy of f whose characteristics are the partition
//     (architecture and GPU model taken from f), with no Id (the caller
//     names it), no partitionability (a partition is used whole) and
//     Availability false (it is sold, not on offer).
//
// f and cfg are not modified. cfg is rejected, with every problem joined
// (errors.Join) as *PartitionError (errors.Is ErrInvalidPartition), when:
//
//   - CPU, memory or pods are zero or negative (ErrNonPositiveQuantity),
//     below the policy's minimum (ErrBelowMinimum), not a multiple of the
//     policy's step when the step is above zero (ErrNotStepMultiple), or
//     more than f has (ErrExceedsFlavor);
//   - storage, or GPU memory, is negative (ErrNegativeQuantity) or more
//     than f has (ErrExceedsFlavor);
//   - a GPU is asked for with cores not above zero (ErrNonPositiveQuantity),
//     or f has none or fewer (ErrExceedsFlavor), or of another model than
//     f's (ErrModelMismatch).
//
// f itself is rejected when nil (ErrNoFlavor), not a K8Slice
// (ErrNotK8Slice), without characteristics or partitionability policy
// (ErrNotPartitionable), or when its policy has negative values
// (ErrInvalidPolicy); a nil cfg is ErrNoConfiguration.
func PartitionK8Slice(f *Flavor, cfg *K8SliceConfiguration) (remaining, partition *Flavor, err error) {
	switch {
	case f == nil:
		return nil, nil, &PartitionError{Resource: "flavor", Err: ErrNoFlavor}
	case cfg == nil:
		return nil, nil, &PartitionError{Resource: "configuration", Err: ErrNoConfiguration}
	case f.GetK8Slice() == nil:
		return nil, nil, &PartitionError{Resource: "flavor", Err: ErrNotK8Slice,
			Detail: fmt.Sprintf("flavor %q is %s", f.GetId(), typeName(FlavorTypeOf(f)))}
	case f.GetK8Slice().GetCharacteristics() == nil:
		return nil, nil, &PartitionError{Resource: "flavor", Err: ErrNotPartitionable,
			Detail: fmt.Sprintf("flavor %q has no characteristics", f.GetId())}
	case f.GetK8Slice().GetPartitionability() == nil:
		return nil, nil, &PartitionError{Resource: "flavor", Err: ErrNotPartitionable,
			Detail: fmt.Sprintf("flavor %q has no partitionability policy", f.GetId())}
	}
	have := f.GetK8Slice().GetCharacteristics()
	pol := f.GetK8Slice().GetPartitionability()
	if err := checkPolicy(pol); err != nil {
		return nil, nil, err
	}

	var errs []error
	bad := func(resource string, err error, format string, args ...any) {
		errs = append(errs, &PartitionError{Resource: resource, Err: err, Detail: fmt.Sprintf(format, args...)})
	}
	stepped := func(resource string, want, min, step, avail int64) {
		switch {
		case want <= 0:
			bad(resource, ErrNonPositiveQuantity, "%d", want)
			return
		case want < min:
			bad(resource, ErrBelowMinimum, "%d below minimum %d", want, min)
		case step > 0 && want%step != 0:
			bad(resource, ErrNotStepMultiple, "%d not a multiple of step %d", want, step)
		}
		if want > avail {
			bad(resource, ErrExceedsFlavor, "%d asked, %d available", want, avail)
		}
	}
	plain := func(resource string, want, avail int64) {
		switch {
		case want < 0:
			bad(resource, ErrNegativeQuantity, "%d", want)
		case want > avail:
			bad(resource, ErrExceedsFlavor, "%d asked, %d available", want, avail)
		}
	}
	stepped("cpu", cfg.GetCpu(), pol.GetCpuMin(), pol.GetCpuStep(), have.GetCpu())
	stepped("memory", cfg.GetMemory(), pol.GetMemoryMin(), pol.GetMemoryStep(), have.GetMemory())
	stepped("pods", cfg.GetPods(), pol.GetPodsMin(), pol.GetPodsStep(), have.GetPods())
	plain("storage", cfg.GetStorage(), have.GetStorage())
	if g := cfg.GetGpu(); g != nil {
		hg := have.GetGpu()
		switch {
		case g.GetCores() <= 0:
			bad("gpu.cores", ErrNonPositiveQuantity, "%d", g.GetCores())
		case hg == nil:
			bad("gpu.cores", ErrExceedsFlavor, "%d asked, flavor has no GPU", g.GetCores())
		case g.GetCores() > hg.GetCores():
			bad("gpu.cores", ErrExceedsFlavor, "%d asked, %d available", g.GetCores(), hg.GetCores())
		}
		plain("gpu.memory", g.GetMemory(), hg.GetMemory())
		if g.GetModel() != "" && hg != nil && g.GetModel() != hg.GetModel() {
			bad("gpu.model", ErrModelMismatch, "%q asked, flavor has %q", g.GetModel(), hg.GetModel())
		}
	}
	if len(errs) > 0 {
		return nil, nil, errors.Join(errs...)
	}

	remaining = proto.Clone(f).(*Flavor)
	left := remaining.GetK8Slice().GetCharacteristics()
	left.Cpu -= cfg.GetCpu()
	left.Memory -= cfg.GetMemory()
	left.Pods -= cfg.GetPods()
	left.Storage -= cfg.GetStorage()
	var partGPU *GPU
	if g := cfg.GetGpu(); g != nil {
		left.Gpu.Cores -= g.GetCores()
		left.Gpu.Memory -= g.GetMemory()
		partGPU = &GPU{Model: left.GetGpu().GetModel(), Cores: g.GetCores(), Memory: g.GetMemory()}
		if left.Gpu.Cores == 0 && left.Gpu.Memory == 0 {
			left.Gpu = nil
		}
	}
	if left.GetCpu() < max(pol.GetCpuMin(), 1) || left.GetMemory() < max(pol.GetMemoryMin(), 1) || left.GetPods() < max(pol.GetPodsMin(), 1) {
		remaining.Availability = false
	}

	partition = proto.Clone(f).(*Flavor)
	partition.Id = ""
	partition.Availability = false
	pk := partition.GetK8Slice()
	pk.Partitionability = nil
	pk.Characteristics = &K8SliceCharacteristics{
		Architecture: have.GetArchitecture(),
		Cpu:          cfg.GetCpu(),
		Memory:       cfg.GetMemory(),
		Pods:         cfg.GetPods(),
		Gpu:          partGPU,
		Storage:      cfg.GetStorage(),
	}
	return remaining, partition, nil
}

// checkPolicy rejects a partitionability policy with negative values.
func checkPolicy(p *Partitionability) error {
	var errs []error
	for _, v := range []struct {
		name string
		val  int64
	}{
		{"cpu_min", p.GetCpuMin()}, {"memory_min", p.GetMemoryMin()}, {"pods_min", p.GetPodsMin()},
		{"cpu_step", p.GetCpuStep()}, {"memory_step", p.GetMemoryStep()}, {"pods_step", p.GetPodsStep()},
	} {
		if v.val < 0 {
			errs = append(errs, &PartitionError{
				Resource: "partitionability." + v.name,
				Err:      fmt.Errorf("%w: %w", ErrInvalidPolicy, ErrNegativeQuantity),
				Detail:   fmt.Sprintf("%d", v.val),
			})
		}
	}
	return errors.Join(errs...)
}
