package cmdutil

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
)

// MainFunc is a whole program behind a flag set: it parses args, runs until
// ctx ends and returns what went wrong (flag.ErrHelp after -h). The hosts
// export one (controller.Main, crm.Main, ccrm.Main, node.Main), so that a
// thin main in cmd/ and the multi-call edgekit binary share one flag code.
type MainFunc func(ctx context.Context, args []string, stderr io.Writer) error

// Run runs main with args under a context that SIGINT and SIGTERM cancel,
// and returns the process's exit code: 0 on success or after -h, 1 after
// an error, which it prints to stderr prefixed with name (unless it starts
// with it already).
func Run(name string, main MainFunc, args []string, stderr io.Writer) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err := main(ctx, args, stderr)
	if err == nil || errors.Is(err, flag.ErrHelp) {
		return 0
	}
	msg := err.Error()
	if !strings.HasPrefix(msg, name+": ") {
		msg = name + ": " + msg
	}
	fmt.Fprintln(stderr, msg)
	return 1
}

// Exit runs main with the process's arguments (see Run) and exits.
func Exit(name string, main MainFunc) {
	os.Exit(Run(name, main, os.Args[1:], os.Stderr))
}

// SplitList splits a comma-separated flag value, trimming spaces and
// dropping empty entries.
func SplitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}
