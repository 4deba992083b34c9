package main

import (
	"bufio"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestAgainstTheControllerBinaryWithDevTLS starts the real controller with
// --dev-tls and reaches it the way a one-command region would set edgectl
// up: a context with the development CA and the admin token file.
func TestAgainstTheControllerBinaryWithDevTLS(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	cmd := exec.Command(controllerBinary, "--data-dir", data, "--listen", "127.0.0.1:0", "--metrics-listen", "", "--dev-tls")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	ready := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		addr := regexp.MustCompile(`msg="controller ready".* addr=(\S+)`)
		for sc.Scan() {
			if m := addr.FindStringSubmatch(sc.Text()); m != nil {
				select {
				case ready <- m[1]:
				default:
				}
			}
		}
		exited <- cmd.Wait()
	}()
	stopped := false
	t.Cleanup(func() {
		if !stopped {
			_ = cmd.Process.Kill()
			<-exited
		}
	})
	var addr string
	select {
	case addr = <-ready:
	case err := <-exited:
		stopped = true
		t.Fatalf("controller exited before it was ready: %v", err)
	case <-time.After(60 * time.Second):
		t.Fatal("controller not ready within 60s")
	}

	u := user{t: t, env: []string{"EDGECTL_CONFIG=" + filepath.Join(t.TempDir(), "edgectl.yaml")}}
	u.run("config", "set-context", "local", "--addr", addr,
		"--ca-file", filepath.Join(data, "tls", "ca.crt"), "--token-file", filepath.Join(data, "admin.token")).ok(t, "set-context")
	u.run("create", "flavor", "small", "--vcpus", "2").ok(t, "create flavor over TLS")
	r := u.run("show", "flavors", "-o", "json").ok(t, "show flavors over TLS")
	if !strings.Contains(r.out, `"name": "small"`) {
		t.Errorf("flavors: %s", r.out)
	}
	// Plaintext to a TLS controller: refused, with a hint.
	u.run("--insecure", "show", "flavors").fails(t, "plaintext to TLS", 1, "Hint: the server may require TLS")

	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-exited:
		stopped = true
		if err != nil {
			t.Errorf("controller exit after SIGTERM: %v", err)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("controller did not stop on SIGTERM")
	}
}
