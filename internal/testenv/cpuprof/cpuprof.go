// Package cpuprof tells apart the CPU time of the parts of one process in a
// benchmark: a CPU profile of the process over the timed part, whose
// samples are summed by the value of a profiler label (runtime/pprof.Do).
// Goroutines inherit their creator's labels, so a part started under a
// label (an etcd member, a server) is counted under it with everything it
// starts.
//
// The profile samples at 100 Hz and misses some of the process's CPU, so
// each part's figure is a lower bound; SelfCPU gives the process total to
// compare with.
package cpuprof

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"runtime/pprof"
	"syscall"
	"time"

	"github.com/google/pprof/profile"
)

// Profile is a CPU profile of this process in progress.
type Profile struct {
	buf bytes.Buffer
	on  bool
}

// Start starts profiling this process. When a profile runs already (the
// test binary's -test.cpuprofile), the returned Profile's Stop reports
// nothing.
func Start() *Profile {
	p := &Profile{}
	p.on = pprof.StartCPUProfile(&p.buf) == nil
	return p
}

// Stop ends the profile and returns the CPU time of its samples by the
// value of label ("" for samples without it). It returns nil and no error
// when Start found a profile already running. When file is not empty, the
// profile is also written there, to be read with go tool pprof (-tagfocus
// selects a part).
func (p *Profile) Stop(label, file string) (map[string]time.Duration, error) {
	if !p.on {
		return nil, nil
	}
	p.on = false
	pprof.StopCPUProfile()
	if file != "" {
		if err := os.WriteFile(file, p.buf.Bytes(), 0o644); err != nil {
			return nil, err
		}
	}
	prof, err := profile.Parse(&p.buf)
	if err != nil {
		return nil, fmt.Errorf("parse the CPU profile: %w", err)
	}
	idx := -1
	for i, st := range prof.SampleType {
		if st.Type == "cpu" && st.Unit == "nanoseconds" {
			idx = i
		}
	}
	if idx < 0 {
		return nil, errors.New("the CPU profile has no cpu/nanoseconds sample type")
	}
	out := map[string]time.Duration{}
	for _, s := range prof.Sample {
		part := ""
		if v := s.Label[label]; len(v) > 0 {
			part = v[0]
		}
		out[part] += time.Duration(s.Value[idx])
	}
	return out, nil
}

// SelfCPU is the CPU time (user and system) this process has used so far,
// or zero when the system does not say.
func SelfCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
