package cmdutil_test

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"io"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/edgekit/edgekit/internal/cmdutil"
)

func TestReadyFileRoundTrip(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "x.ready")
	want := cmdutil.Ready{Listeners: map[string]string{"api": "127.0.0.1:1"}, Etcd: []string{"http://127.0.0.1:2"}, Files: map[string]string{"ca": "/ca"}}
	remove, err := cmdutil.WriteReady(path, want)
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("ready file: %v, mode %v", err, fi.Mode().Perm())
	}
	got, err := cmdutil.ReadReady(path)
	if err != nil {
		t.Fatal(err)
	}
	if got.PID != os.Getpid() || got.Listeners["api"] != "127.0.0.1:1" || got.Etcd[0] != "http://127.0.0.1:2" || got.Files["ca"] != "/ca" {
		t.Errorf("read back %+v", got)
	}
	remove()
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the ready file survives its remove: %v", err)
	}
	if ents, _ := os.ReadDir(filepath.Dir(path)); len(ents) != 0 {
		t.Errorf("temporary files left: %v", ents)
	}
	if _, err := cmdutil.ReadReady(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("reading a missing ready file: %v", err)
	}
	bad := filepath.Join(t.TempDir(), "bad")
	if err := os.WriteFile(bad, []byte("{"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := cmdutil.ReadReady(bad); err == nil {
		t.Error("a truncated ready file reads")
	}
	if rm, err := cmdutil.WriteReady("", want); err != nil || rm == nil {
		t.Errorf("an empty path: %v", err)
	}
}

func TestSplitList(t *testing.T) {
	t.Parallel()
	if got := cmdutil.SplitList(" a, ,b ,"); !slices.Equal(got, []string{"a", "b"}) {
		t.Errorf("SplitList = %q", got)
	}
	if got := cmdutil.SplitList(""); got != nil {
		t.Errorf("SplitList of nothing = %q", got)
	}
}

func TestRunExitCodes(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		err  error
		code int
		out  string
	}{
		{nil, 0, ""},
		{flag.ErrHelp, 0, ""},
		{errors.New("boom"), 1, "prog: boom\n"},
		// An error that names the program already is not prefixed twice.
		{errors.New("prog: boom"), 1, "prog: boom\n"},
		{errors.New("program: boom"), 1, "prog: program: boom\n"},
	} {
		var out bytes.Buffer
		code := cmdutil.Run("prog", func(context.Context, []string, io.Writer) error { return c.err }, nil, &out)
		if code != c.code || out.String() != c.out {
			t.Errorf("Run with %v: code %d, output %q", c.err, code, out.String())
		}
	}
}
