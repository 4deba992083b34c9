package local_test

import (
	"runtime"
	"testing"

	"github.com/edgekit/edgekit/platforms/local"
)

func TestReadHostFacts(t *testing.T) {
	t.Parallel()
	hf, err := local.ReadHostFacts(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if hf.CPUs != runtime.NumCPU() || hf.Arch != runtime.GOARCH {
		t.Errorf("CPUs %d arch %s, want %d %s", hf.CPUs, hf.Arch, runtime.NumCPU(), runtime.GOARCH)
	}
	if hf.MemoryBytes == 0 || hf.MemoryAvailableBytes > hf.MemoryBytes || hf.DiskBytes == 0 || hf.DiskAvailableBytes > hf.DiskBytes {
		t.Errorf("implausible facts %+v", hf)
	}
	if _, err := local.ReadHostFacts("/nonexistent/dir"); err == nil {
		t.Error("facts of an absent directory")
	}
}
