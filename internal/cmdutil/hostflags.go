package cmdutil

import (
	"flag"
	"fmt"
	"io"
	"log/slog"
	"sync"
)

// HostFlags are the flags every host's Main shares: --log-format,
// --log-level and --ready-file.
type HostFlags struct {
	LogFormat, LogLevel, ReadyFile string

	mu     sync.Mutex
	remove func()
}

// Register defines the flags on fs.
func (h *HostFlags) Register(fs *flag.FlagSet) {
	fs.StringVar(&h.LogFormat, "log-format", "text", "log format: text or json")
	fs.StringVar(&h.LogLevel, "log-level", "info", "log level: debug, info, warn or error")
	fs.StringVar(&h.ReadyFile, "ready-file", "", ReadyFileUsage)
}

// Logger returns the logger the flags ask for, writing to w.
func (h *HostFlags) Logger(w io.Writer) (*slog.Logger, error) {
	return NewLogger(w, h.LogFormat, h.LogLevel)
}

// Ready writes the ready file, when --ready-file was given; a failure is
// logged (the host runs on: only its supervisor misses the file).
func (h *HostFlags) Ready(log *slog.Logger, r Ready) {
	rm, err := WriteReady(h.ReadyFile, r)
	if err != nil {
		log.Error("ready file", slog.Any("error", err))
		return
	}
	h.mu.Lock()
	h.remove = rm
	h.mu.Unlock()
}

// Done removes the ready file Ready wrote, if any: call it when the host
// stops serving.
func (h *HostFlags) Done() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.remove != nil {
		h.remove()
		h.remove = nil
	}
}

// Parse parses args into fs and refuses positional arguments.
func Parse(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	return nil
}
