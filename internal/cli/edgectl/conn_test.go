package edgectl_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/edgekit/edgekit/internal/cli/edgectl"
	"github.com/edgekit/edgekit/internal/cli/fakecontroller"
)

func TestTLSTokenAndContexts(t *testing.T) {
	t.Parallel()
	srv := fakecontroller.Start(t, fakecontroller.Options{TLS: true, Token: "s3cret"})
	e := newEnv(t)
	ctx := context.Background()
	base := []string{"--addr", srv.Addr}

	runCtx(ctx, t, e, nil, "", append(base, "--ca-file", srv.CAFile, "show", "flavors")...).
		fails(t, edgectl.ExitFailure, "Unauthenticated")
	runCtx(ctx, t, e, nil, "", append(base, "--ca-file", srv.CAFile, "--token", "s3cret", "show", "flavors")...).ok(t)
	r := runCtx(ctx, t, e, nil, "", append(base, "--token", "s3cret", "show", "flavors")...)
	r.fails(t, edgectl.ExitFailure, "Unavailable", "Hint: the server's certificate is not signed by a known CA: give its CA with --ca-file")
	runCtx(ctx, t, e, nil, "", append(base, "--insecure", "--token", "s3cret", "show", "flavors")...).
		fails(t, edgectl.ExitFailure, "Hint: the server may require TLS")

	withEnvToken := env{"EDGECTL_CONFIG": e["EDGECTL_CONFIG"], "EDGECTL_TOKEN": "s3cret"}
	runCtx(ctx, t, withEnvToken, nil, "", append(base, "--ca-file", srv.CAFile, "show", "flavors")...).ok(t)

	// A context in the configuration file: its token file is relative to
	// the file.
	dir := filepath.Dir(e["EDGECTL_CONFIG"])
	if err := os.WriteFile(filepath.Join(dir, "admin.token"), []byte("s3cret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	r = runCtx(ctx, t, e, nil, "", "config", "set-context", "lab", "--addr", srv.Addr, "--ca-file", srv.CAFile, "--token-file", "admin.token").ok(t)
	if !strings.Contains(r.out, "context lab saved in "+e["EDGECTL_CONFIG"]) {
		t.Errorf("set-context: %q", r.out)
	}
	runCtx(ctx, t, e, nil, "", "config", "set-context", "other", "--addr", "127.0.0.1:1", "--insecure").ok(t)
	runCtx(ctx, t, e, nil, "", "create", "flavor", "f1").ok(t) // "lab" is current: the first context saved
	if c, _ := srv.LastCall("CreateFlavor"); c.Token != "s3cret" {
		t.Errorf("token sent from the context: %q", c.Token)
	}
	r = runCtx(ctx, t, e, nil, "", "config", "get-contexts").ok(t)
	const want = "CURRENT  NAME   ADDR             TLS\n*        lab    "
	if !strings.HasPrefix(r.out, want) || !strings.Contains(r.out, "         other  127.0.0.1:1      no\n") {
		t.Errorf("get-contexts:\n%s", r.out)
	}
	runCtx(ctx, t, e, nil, "", "config", "use-context", "other").ok(t)
	runCtx(ctx, t, e, nil, "", "show", "flavors").fails(t, edgectl.ExitFailure, "127.0.0.1:1")
	runCtx(ctx, t, e, nil, "", "--context", "lab", "show", "flavors").ok(t)
	runCtx(ctx, t, e, nil, "", "--context", "nope", "show", "flavors").fails(t, edgectl.ExitUsage, `context "nope": no such context`)
	runCtx(ctx, t, e, nil, "", "config", "use-context", "nope").fails(t, edgectl.ExitUsage, "no such context")
	runCtx(ctx, t, e, nil, "", "config", "set-context", "x", "--token", "t").fails(t, edgectl.ExitUsage, "use --token-file")
	r = runCtx(ctx, t, e, nil, "", "config", "view").ok(t)
	if !strings.Contains(r.out, "current-context: other") || !strings.Contains(r.out, "token-file: admin.token") {
		t.Errorf("config view:\n%s", r.out)
	}
	runCtx(ctx, t, e, nil, "", "config", "delete-context", "other").ok(t)
	r = runCtx(ctx, t, e, nil, "", "config", "path").ok(t)
	if r.out != e["EDGECTL_CONFIG"]+"\n" {
		t.Errorf("config path: %q", r.out)
	}
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte("contexts: [{name: a, adress: x}]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	runCtx(ctx, t, e, nil, "", "--config-file", bad, "show", "flavors").fails(t, edgectl.ExitUsage, "bad.yaml", "adress")
}
