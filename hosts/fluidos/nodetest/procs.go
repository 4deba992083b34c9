package nodetest

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// ProcessesUnder lists the processes of this host whose working directory
// is under dir: what a node's local platform started under its data
// directory (each instance works in its own directory there).
func ProcessesUnder(dir string) []int {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var out []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if cwd, err := os.Readlink(filepath.Join("/proc", e.Name(), "cwd")); err == nil && strings.HasPrefix(cwd, dir+string(filepath.Separator)) {
			out = append(out, pid)
		}
	}
	return out
}
