package consumer

import (
	"errors"
	"strings"
	"testing"

	"github.com/edgekit/edgekit/fluidos"
)

// TestFitPartition: amounts are raised to the seller's minimum, then to
// the next multiple of its step; what the flavor cannot give once raised
// is refused naming the resource; amounts already fitting stay, and what
// the seller checks accepts the result.
func TestFitPartition(t *testing.T) {
	t.Parallel()
	f := &fluidos.Flavor{Id: "f1", Spec: &fluidos.Flavor_K8Slice{K8Slice: &fluidos.K8Slice{
		Characteristics:  &fluidos.K8SliceCharacteristics{Cpu: 4000, Memory: 1990 << 20, Pods: 110},
		Partitionability: &fluidos.Partitionability{CpuMin: 1000, MemoryMin: 100 << 20, PodsMin: 30, CpuStep: 500, MemoryStep: 100 << 20, PodsStep: 5},
	}}}
	cfg := func(cpu, mem, pods int64) *fluidos.Configuration {
		return &fluidos.Configuration{Spec: &fluidos.Configuration_K8Slice{K8Slice: &fluidos.K8SliceConfiguration{Cpu: cpu, Memory: mem, Pods: pods}}}
	}
	got, why, err := fitPartition(f, cfg(1200, 1<<30, 20))
	if err != nil {
		t.Fatal(err)
	}
	if k := got.GetK8Slice(); k.GetCpu() != 1500 || k.GetMemory() != 1100<<20 || k.GetPods() != 30 {
		t.Fatalf("fitted %v", k)
	}
	for _, w := range []string{"cpu 1200m raised to 1500m", "memory 1Gi raised to 1100Mi", "pods 20 raised to 30 (the seller's minimum 30)"} {
		if !strings.Contains(why, w) {
			t.Errorf("%q does not say %q", why, w)
		}
	}
	if _, _, err := fluidos.PartitionK8Slice(f, got.GetK8Slice()); err != nil {
		t.Errorf("the seller's rules refuse the fitted partition: %v", err)
	}
	if same, why, err := fitPartition(f, cfg(2000, 1000<<20, 40)); err != nil || why != "" || same.GetK8Slice().GetMemory() != 1000<<20 {
		t.Errorf("a fitting partition changed: %v %q %v", same, why, err)
	}
	_, _, err = fitPartition(f, cfg(2000, 1950<<20, 40))
	if !errors.Is(err, ErrNoFit) || !strings.Contains(err.Error(), "memory 1950Mi raised to 2000Mi") {
		t.Errorf("want ErrNoFit naming memory, got %v", err)
	}
}
