package local

import (
	"bufio"
	"bytes"
	"fmt"
	"math"
	"os"
	"runtime"
	"strconv"
	"strings"
	"syscall"
)

// hostInfo is the capacity and usage of this host as the OS reports it.
type hostInfo struct {
	hostname   string
	kernel     string
	cpus       int
	load1      float64
	memTotalKB uint64
	memAvailKB uint64
	diskTotalB uint64
	diskAvailB uint64
}

// readHostInfo reads the host's CPUs (runtime.NumCPU), memory
// (/proc/meminfo), one-minute load (/proc/loadavg) and the size of the
// filesystem that holds dir (statfs).
func readHostInfo(dir string) (hostInfo, error) {
	hi := hostInfo{cpus: runtime.NumCPU()}
	hi.hostname, _ = os.Hostname()
	var uts syscall.Utsname
	if err := syscall.Uname(&uts); err == nil {
		hi.kernel = utsString(uts.Release[:])
	}
	mem, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return hostInfo{}, fmt.Errorf("reading memory size: %w", err)
	}
	hi.memTotalKB, hi.memAvailKB, err = parseMeminfo(mem)
	if err != nil {
		return hostInfo{}, err
	}
	if la, err := os.ReadFile("/proc/loadavg"); err == nil {
		if f := strings.Fields(string(la)); len(f) > 0 {
			hi.load1, _ = strconv.ParseFloat(f[0], 64)
		}
	}
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return hostInfo{}, fmt.Errorf("reading disk size of %s: %w", dir, err)
	}
	hi.diskTotalB = st.Blocks * uint64(st.Bsize)
	hi.diskAvailB = st.Bavail * uint64(st.Bsize)
	return hi, nil
}

func utsString[T int8 | uint8](a []T) string {
	b := make([]byte, 0, len(a))
	for _, c := range a {
		if c == 0 {
			break
		}
		b = append(b, byte(c))
	}
	return string(b)
}

// parseMeminfo returns MemTotal and MemAvailable in kB (MemFree when the
// kernel has no MemAvailable).
func parseMeminfo(b []byte) (total, avail uint64, err error) {
	var free uint64
	haveAvail := false
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 2 {
			continue
		}
		v, perr := strconv.ParseUint(f[1], 10, 64)
		if perr != nil {
			continue
		}
		switch f[0] {
		case "MemTotal:":
			total = v
		case "MemAvailable:":
			avail, haveAvail = v, true
		case "MemFree:":
			free = v
		}
	}
	if total == 0 {
		return 0, 0, fmt.Errorf("reading memory size: no MemTotal in /proc/meminfo")
	}
	if !haveAvail {
		avail = free
	}
	return total, avail, nil
}

func (hi hostInfo) memTotalMB() uint64 { return hi.memTotalKB / 1024 }
func (hi hostInfo) memUsedMB() uint64 {
	return (hi.memTotalKB - min(hi.memAvailKB, hi.memTotalKB)) / 1024
}
func (hi hostInfo) diskTotalGB() uint64 { return hi.diskTotalB >> 30 }
func (hi hostInfo) diskUsedGB() uint64 {
	return (hi.diskTotalB - min(hi.diskAvailB, hi.diskTotalB)) >> 30
}

// cpusUsed is the one-minute load rounded up, capped at the CPU count.
func (hi hostInfo) cpusUsed() uint64 {
	return uint64(min(math.Ceil(hi.load1), float64(hi.cpus)))
}
