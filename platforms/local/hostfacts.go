package local

import "runtime"

// HostFacts is the capacity of this host as the local platform reports it
// in GatherCloudletInfo, for hosts that sell or schedule on it (a FLUIDOS
// node publishes its K8Slice flavor from it).
type HostFacts struct {
	// Hostname of the host.
	Hostname string
	// Arch is the CPU architecture (runtime.GOARCH).
	Arch string
	// CPUs is the number of CPUs (runtime.NumCPU).
	CPUs int
	// MemoryBytes and MemoryAvailableBytes are MemTotal and MemAvailable
	// of /proc/meminfo.
	MemoryBytes, MemoryAvailableBytes uint64
	// DiskBytes and DiskAvailableBytes are the size and the space left of
	// the filesystem holding the directory asked about.
	DiskBytes, DiskAvailableBytes uint64
}

// ReadHostFacts reads the host's capacity, with the disk of the filesystem
// that holds dir.
func ReadHostFacts(dir string) (HostFacts, error) {
	hi, err := readHostInfo(dir)
	if err != nil {
		return HostFacts{}, err
	}
	return HostFacts{
		Hostname:             hi.hostname,
		Arch:                 runtime.GOARCH,
		CPUs:                 hi.cpus,
		MemoryBytes:          hi.memTotalKB << 10,
		MemoryAvailableBytes: hi.memAvailKB << 10,
		DiskBytes:            hi.diskTotalB,
		DiskAvailableBytes:   hi.diskAvailB,
	}, nil
}
