package docs_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/edgekit/edgekit/hosts/controller"
	"github.com/edgekit/edgekit/internal/etcd"
)

// etcdctlCall is one etcdctl command of the guide that names certificates.
type etcdctlCall struct {
	line              string
	endpointsFile     string // the file of $(cat FILE)
	cacert, cert, key string
	command           []string
}

// parseEtcdctl reads the flags of an etcdctl command line; the endpoints
// must be "$(cat FILE)".
func parseEtcdctl(t *testing.T, line string) etcdctlCall {
	t.Helper()
	words := shellWords(line)
	c := etcdctlCall{line: line}
	for i := 1; i < len(words); i++ {
		flag, value, hasValue := strings.Cut(words[i], "=")
		switch flag {
		case "--endpoints", "--cacert", "--cert", "--key":
			if !hasValue {
				if i+1 == len(words) {
					t.Fatalf("%s: %s without a value", line, flag)
				}
				value = words[i+1]
				i++
			}
			switch flag {
			case "--endpoints":
				f, ok := strings.CutPrefix(value, "$(cat ")
				if !ok || !strings.HasSuffix(f, ")") {
					t.Fatalf("%s: endpoints %q: want $(cat FILE)", line, value)
				}
				c.endpointsFile = strings.TrimSuffix(f, ")")
			case "--cacert":
				c.cacert = value
			case "--cert":
				c.cert = value
			case "--key":
				c.key = value
			}
		default:
			c.command = append(c.command, words[i])
		}
	}
	return c
}

// The etcdctl commands the operator guide shows with certificates work
// against a controller under --dev-tls, as etcdctl does them; without the
// client certificate, they are refused.
func TestOperatorGuideEtcdctlCommands(t *testing.T) {
	t.Parallel()
	var calls []etcdctlCall
	for _, line := range documentedCommands(t, "/tmp/etcdtools/bin/etcdctl ") {
		if strings.Contains(line, "--cert") {
			calls = append(calls, parseEtcdctl(t, line))
		}
	}
	if len(calls) < 2 {
		t.Fatalf("the operator guide shows %d etcdctl commands with certificates, want the read and the snapshot", len(calls))
	}

	// The guide's paths are relative to the directory holding "region".
	base := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan *controller.Running, 1)
	done := make(chan error, 1)
	go func() {
		done <- controller.Run(ctx, controller.Options{DataDir: filepath.Join(base, "region"), Listen: "127.0.0.1:0", DevTLS: true,
			StopTimeout: 2 * time.Second, Ready: func(r *controller.Running) { ready <- r }})
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("controller: %v", err)
		}
	})
	select {
	case <-ready:
	case err := <-done:
		done <- err // for the cleanup, which waits for Run's end
		t.Fatalf("the controller did not start: %v", err)
	case <-time.After(60 * time.Second):
		t.Fatal("the controller did not start within 60s")
	}
	path := func(p string) string { return filepath.Join(base, p) }

	for _, c := range calls {
		t.Run(strings.Join(c.command, " "), func(t *testing.T) {
			ep, err := os.ReadFile(path(c.endpointsFile))
			if err != nil {
				t.Fatal(err)
			}
			cc := etcd.ClientConfig{Endpoints: []string{strings.TrimSpace(string(ep))}, CAFile: path(c.cacert),
				CertFile: path(c.cert), KeyFile: path(c.key), DialTimeout: 3 * time.Second}
			if err := runEtcdctl(t, cc, c.command); err != nil {
				t.Fatalf("%s: %v", c.line, err)
			}
			cc.CertFile, cc.KeyFile = "", ""
			if err := runEtcdctl(t, cc, c.command); err == nil {
				t.Errorf("%s without --cert and --key worked", c.line)
			}
		})
	}
}

// runEtcdctl does what etcdctl does for the commands the guide shows.
func runEtcdctl(t *testing.T, cc etcd.ClientConfig, command []string) error {
	t.Helper()
	cli, err := etcd.NewClient(cc)
	if err != nil {
		return err
	}
	defer cli.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	switch {
	case len(command) == 4 && command[0] == "get" && command[2] == "--prefix" && command[3] == "--keys-only":
		_, err := cli.Get(ctx, command[1], clientv3.WithPrefix(), clientv3.WithKeysOnly())
		return err
	case len(command) == 3 && command[0] == "snapshot" && command[1] == "save":
		rc, err := cli.Snapshot(ctx)
		if err != nil {
			return err
		}
		defer rc.Close()
		f, err := os.Create(filepath.Join(t.TempDir(), command[2]))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		n, err := f.ReadFrom(rc)
		if err == nil && n == 0 {
			err = errors.New("an empty snapshot")
		}
		return err
	default:
		t.Fatalf("etcdctl %q: a command not known to this test", command)
		return nil
	}
}
