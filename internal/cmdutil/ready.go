package cmdutil

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
)

// ReadyFileUsage is the help text of every host's --ready-file flag.
const ReadyFileUsage = "once serving, write this process's pid and listening addresses to this file as JSON (for a supervisor; removed on exit)"

// Ready is what a host writes to its --ready-file once every listener
// serves: a supervisor (edgekit up) starts hosts on port 0 and learns
// where they listen from it.
type Ready struct {
	// PID is the host's process id.
	PID int `json:"pid"`
	// Listeners maps a listener's role ("api", "http", "metrics", "rear")
	// to the address it got.
	Listeners map[string]string `json:"listeners,omitempty"`
	// Etcd are the etcd client endpoints the host uses.
	Etcd []string `json:"etcd,omitempty"`
	// Files maps a role ("admin-token", "ca") to a file the host wrote.
	Files map[string]string `json:"files,omitempty"`
}

// WriteReady writes r (with this process's pid) to path, mode 0600,
// through a rename so that a reader never sees half a file. An empty path
// writes nothing. The returned function removes the file; call it when the
// host stops serving.
func WriteReady(path string, r Ready) (remove func(), err error) {
	if path == "" {
		return func() {}, nil
	}
	r.PID = os.Getpid()
	data, err := json.Marshal(r)
	if err != nil {
		return nil, fmt.Errorf("--ready-file: %w", err)
	}
	f, err := os.CreateTemp(filepath.Dir(path), ".ready-*")
	if err != nil {
		return nil, fmt.Errorf("--ready-file: %w", err)
	}
	defer os.Remove(f.Name()) // a no-op after the rename
	if _, err := f.Write(data); err != nil {
		f.Close()
		return nil, fmt.Errorf("--ready-file: %w", err)
	}
	if err := f.Close(); err != nil {
		return nil, fmt.Errorf("--ready-file: %w", err)
	}
	if err := os.Rename(f.Name(), path); err != nil {
		return nil, fmt.Errorf("--ready-file: %w", err)
	}
	return func() { _ = os.Remove(path) }, nil
}

// ReadReady reads a file WriteReady wrote.
func ReadReady(path string) (Ready, error) {
	var r Ready
	data, err := os.ReadFile(path)
	if err != nil {
		return r, err
	}
	if err := json.Unmarshal(data, &r); err != nil {
		return r, fmt.Errorf("ready file %s: %w", path, err)
	}
	return r, nil
}
