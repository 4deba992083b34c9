package fluidos

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/testing/protocmp"
)

func TestPartitionK8Slice(t *testing.T) {
	f := k8sFlavor()
	before := proto.Clone(f)
	cfg := &K8SliceConfiguration{
		Cpu: 1500, Memory: 2 << 30, Pods: 20, Storage: 10 << 30,
		Gpu: &GPU{Cores: 1, Memory: 10 << 30},
	}
	remaining, partition, err := PartitionK8Slice(f, cfg)
	if err != nil {
		t.Fatalf("PartitionK8Slice: %v", err)
	}
	if !proto.Equal(before, f) {
		t.Fatal("PartitionK8Slice modified the flavor")
	}

	wantRemaining := k8sFlavor()
	c := wantRemaining.GetK8Slice().GetCharacteristics()
	c.Cpu, c.Memory, c.Pods, c.Storage = 2500, 6<<30, 90, 90<<30
	c.Gpu = &GPU{Model: "nvidia-a100", Cores: 3, Memory: 30 << 30}
	if d := cmp.Diff(wantRemaining, remaining, protocmp.Transform()); d != "" {
		t.Errorf("remaining (-want +got):\n%s", d)
	}

	wantPartition := k8sFlavor()
	wantPartition.Id = ""
	wantPartition.Availability = false
	wantPartition.GetK8Slice().Partitionability = nil
	wantPartition.GetK8Slice().Characteristics = &K8SliceCharacteristics{
		Architecture: "amd64", Cpu: 1500, Memory: 2 << 30, Pods: 20, Storage: 10 << 30,
		Gpu: &GPU{Model: "nvidia-a100", Cores: 1, Memory: 10 << 30},
	}
	if d := cmp.Diff(wantPartition, partition, protocmp.Transform()); d != "" {
		t.Errorf("partition (-want +got):\n%s", d)
	}
}

func TestPartitionK8SliceExhausts(t *testing.T) {
	f := k8sFlavor()
	// Take everything but what is below the minimums.
	remaining, _, err := PartitionK8Slice(f, &K8SliceConfiguration{
		Cpu: 3750, Memory: 7 << 30, Pods: 105,
		Gpu: &GPU{Model: "nvidia-a100", Cores: 4, Memory: 40 << 30},
	})
	if err != nil {
		t.Fatalf("PartitionK8Slice: %v", err)
	}
	c := remaining.GetK8Slice().GetCharacteristics()
	if c.GetCpu() != 250 || c.GetPods() != 5 || c.GetGpu() != nil {
		t.Errorf("remaining characteristics = %v", c)
	}
	if remaining.GetAvailability() {
		t.Error("remaining below the minimums is still available")
	}
	// What is left can hold a minimum partition: still available.
	remaining, _, err = PartitionK8Slice(f, &K8SliceConfiguration{Cpu: 3500, Memory: 7 << 30, Pods: 100})
	if err != nil {
		t.Fatalf("PartitionK8Slice: %v", err)
	}
	if !remaining.GetAvailability() {
		t.Errorf("remaining %v at the minimums is not available", remaining.GetK8Slice().GetCharacteristics())
	}
}

func TestPartitionK8SliceNoSteps(t *testing.T) {
	f := k8sFlavor()
	f.GetK8Slice().Partitionability = &Partitionability{}
	if _, _, err := PartitionK8Slice(f, &K8SliceConfiguration{Cpu: 1, Memory: 1, Pods: 1}); err != nil {
		t.Fatalf("a policy without minimums or steps rejected 1/1/1: %v", err)
	}
}

func TestPartitionK8SliceErrors(t *testing.T) {
	ok := func() *K8SliceConfiguration { return &K8SliceConfiguration{Cpu: 1000, Memory: 1 << 30, Pods: 10} }
	with := func(mod func(*K8SliceConfiguration)) *K8SliceConfiguration {
		c := ok()
		mod(c)
		return c
	}
	noPolicy := k8sFlavor()
	noPolicy.GetK8Slice().Partitionability = nil
	noChars := k8sFlavor()
	noChars.GetK8Slice().Characteristics = nil
	badPolicy := k8sFlavor()
	badPolicy.GetK8Slice().Partitionability.CpuStep = -250
	noGPU := k8sFlavor()
	noGPU.GetK8Slice().Characteristics.Gpu = nil

	for _, c := range []struct {
		name   string
		flavor *Flavor
		cfg    *K8SliceConfiguration
		want   []problem
	}{
		{"nil flavor", nil, ok(), []problem{{ErrNoFlavor, "invalid partition: flavor: no flavor"}}},
		{"nil configuration", k8sFlavor(), nil, []problem{{ErrNoConfiguration, "configuration: no configuration"}}},
		{"not a k8slice", serviceFlavor(), ok(), []problem{{ErrNotK8Slice, `flavor: flavor is not a K8Slice: flavor "svc-1" is SERVICE`}}},
		{"no policy", noPolicy, ok(), []problem{{ErrNotPartitionable, `flavor "k8s-1" has no partitionability policy`}}},
		{"no characteristics", noChars, ok(), []problem{{ErrNotPartitionable, "has no characteristics"}}},
		{"negative policy", badPolicy, ok(), []problem{{ErrInvalidPolicy, "partitionability.cpu_step: invalid partitionability policy: negative quantity: -250"}}},
		{"zero cpu", k8sFlavor(), with(func(c *K8SliceConfiguration) { c.Cpu = 0 }),
			[]problem{{ErrNonPositiveQuantity, "cpu: quantity must be above zero: 0"}}},
		{"negative memory and pods", k8sFlavor(), with(func(c *K8SliceConfiguration) { c.Memory, c.Pods = -1, -10 }),
			[]problem{
				{ErrNonPositiveQuantity, "memory: quantity must be above zero: -1"},
				{ErrNonPositiveQuantity, "pods: quantity must be above zero: -10"},
			}},
		{"below minimum", k8sFlavor(), with(func(c *K8SliceConfiguration) { c.Cpu = 250 }),
			[]problem{{ErrBelowMinimum, "cpu: below the partition minimum: 250 below minimum 500"}}},
		{"not a step multiple", k8sFlavor(), with(func(c *K8SliceConfiguration) { c.Memory = 1<<30 + 1 }),
			[]problem{{ErrNotStepMultiple, "memory: not a multiple of the partition step: 1073741825 not a multiple of step 536870912"}}},
		{"pods not a step multiple", k8sFlavor(), with(func(c *K8SliceConfiguration) { c.Pods = 12 }),
			[]problem{{ErrNotStepMultiple, "pods: not a multiple of the partition step: 12 not a multiple of step 5"}}},
		{"more than the flavor", k8sFlavor(), with(func(c *K8SliceConfiguration) { c.Cpu = 4250 }),
			[]problem{{ErrExceedsFlavor, "cpu: exceeds what the flavor has: 4250 asked, 4000 available"}}},
		{"negative storage", k8sFlavor(), with(func(c *K8SliceConfiguration) { c.Storage = -1 }),
			[]problem{{ErrNegativeQuantity, "storage: negative quantity: -1"}}},
		{"too much storage", k8sFlavor(), with(func(c *K8SliceConfiguration) { c.Storage = 101 << 30 }),
			[]problem{{ErrExceedsFlavor, "storage: exceeds what the flavor has"}}},
		{"gpu without cores", k8sFlavor(), with(func(c *K8SliceConfiguration) { c.Gpu = &GPU{Memory: 1} }),
			[]problem{{ErrNonPositiveQuantity, "gpu.cores: quantity must be above zero: 0"}}},
		{"gpu on a flavor without", noGPU, with(func(c *K8SliceConfiguration) { c.Gpu = &GPU{Cores: 1} }),
			[]problem{{ErrExceedsFlavor, "gpu.cores: exceeds what the flavor has: 1 asked, flavor has no GPU"}}},
		{"too many gpu cores and memory", k8sFlavor(), with(func(c *K8SliceConfiguration) { c.Gpu = &GPU{Cores: 5, Memory: 41 << 30} }),
			[]problem{
				{ErrExceedsFlavor, "gpu.cores: exceeds what the flavor has: 5 asked, 4 available"},
				{ErrExceedsFlavor, "gpu.memory: exceeds what the flavor has"},
			}},
		{"gpu model differs", k8sFlavor(), with(func(c *K8SliceConfiguration) { c.Gpu = &GPU{Model: "amd-mi300", Cores: 1} }),
			[]problem{{ErrModelMismatch, `gpu.model: GPU model differs: "amd-mi300" asked, flavor has "nvidia-a100"`}}},
		{"outside policy everywhere", k8sFlavor(), &K8SliceConfiguration{Cpu: 4100, Memory: 100, Pods: 1},
			[]problem{
				{ErrNotStepMultiple, "cpu: not a multiple"},
				{ErrExceedsFlavor, "cpu: exceeds"},
				{ErrBelowMinimum, "memory: below the partition minimum"},
				{ErrBelowMinimum, "pods: below the partition minimum"},
			}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var before proto.Message
			if c.flavor != nil {
				before = proto.Clone(c.flavor)
			}
			remaining, partition, err := PartitionK8Slice(c.flavor, c.cfg)
			if remaining != nil || partition != nil {
				t.Errorf("got flavors %v, %v with an error", remaining, partition)
			}
			if !errors.Is(err, ErrInvalidPartition) {
				t.Fatalf("err = %v, want ErrInvalidPartition", err)
			}
			var pe *PartitionError
			if !errors.As(err, &pe) {
				t.Fatalf("errors.As(*PartitionError) failed on %v", err)
			}
			if n := len(strings.Split(err.Error(), "\n")); n != len(c.want) {
				t.Fatalf("got %d problems, want %d:\n%v", n, len(c.want), err)
			}
			for _, w := range c.want {
				if !errors.Is(err, w.is) {
					t.Errorf("errors.Is(%v, %v) = false", err, w.is)
				}
				if !strings.Contains(err.Error(), w.text) {
					t.Errorf("err = %q, want it to contain %q", err, w.text)
				}
			}
			if c.flavor != nil && !proto.Equal(before, c.flavor) {
				t.Error("PartitionK8Slice modified the flavor")
			}
		})
	}
}

// FuzzPartitionK8Slice checks that a partition never panics, and that an
// accepted one conserves every quantity and respects the policy.
func FuzzPartitionK8Slice(f *testing.F) {
	f.Add(int64(1500), int64(2<<30), int64(20), int64(10<<30), int64(1), int64(10<<30))
	f.Add(int64(0), int64(-1), int64(5), int64(0), int64(0), int64(0))
	f.Add(int64(4000), int64(8<<30), int64(110), int64(100<<30), int64(4), int64(40<<30))
	f.Fuzz(func(t *testing.T, cpu, memory, pods, storage, gpuCores, gpuMemory int64) {
		flavor := k8sFlavor()
		cfg := &K8SliceConfiguration{Cpu: cpu, Memory: memory, Pods: pods, Storage: storage}
		if gpuCores != 0 || gpuMemory != 0 {
			cfg.Gpu = &GPU{Cores: gpuCores, Memory: gpuMemory}
		}
		remaining, partition, err := PartitionK8Slice(flavor, cfg)
		if err != nil {
			if !errors.Is(err, ErrInvalidPartition) {
				t.Fatalf("error %v does not match ErrInvalidPartition", err)
			}
			return
		}
		have := flavor.GetK8Slice().GetCharacteristics()
		pol := flavor.GetK8Slice().GetPartitionability()
		left := remaining.GetK8Slice().GetCharacteristics()
		part := partition.GetK8Slice().GetCharacteristics()
		for _, q := range []struct {
			name             string
			have, left, part int64
			min, step        int64
		}{
			{"cpu", have.GetCpu(), left.GetCpu(), part.GetCpu(), pol.GetCpuMin(), pol.GetCpuStep()},
			{"memory", have.GetMemory(), left.GetMemory(), part.GetMemory(), pol.GetMemoryMin(), pol.GetMemoryStep()},
			{"pods", have.GetPods(), left.GetPods(), part.GetPods(), pol.GetPodsMin(), pol.GetPodsStep()},
			{"storage", have.GetStorage(), left.GetStorage(), part.GetStorage(), 0, 0},
			{"gpu.cores", have.GetGpu().GetCores(), left.GetGpu().GetCores(), part.GetGpu().GetCores(), 0, 0},
			{"gpu.memory", have.GetGpu().GetMemory(), left.GetGpu().GetMemory(), part.GetGpu().GetMemory(), 0, 0},
		} {
			if q.left+q.part != q.have || q.left < 0 || q.part < 0 {
				t.Errorf("%s: left %d + partition %d != %d", q.name, q.left, q.part, q.have)
			}
			if q.part < q.min || (q.step > 0 && q.part%q.step != 0) {
				t.Errorf("%s: partition %d outside policy (min %d, step %d)", q.name, q.part, q.min, q.step)
			}
		}
	})
}
