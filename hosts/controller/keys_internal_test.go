package controller

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/edgekit/edgekit/atrest"
	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/internal/store"
	"github.com/edgekit/edgekit/internal/testenv/etcdtest"
)

// The operator's rotation with the key commands: a store holding values
// in clear (written before encryption) and sealed ones; keys list counts
// them, rewrap seals them all, keys add makes a new current key, rewrap
// moves every value to it, keys remove refuses the old key while a value
// uses it and drops it after.
func TestKeyCommandsRotate(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	srv := etcdtest.New(t)
	keyFile := filepath.Join(t.TempDir(), atrest.DefaultKeyFileName)
	kr, _, err := atrest.EnsureKeyFile(keyFile)
	if err != nil {
		t.Fatal(err)
	}
	first := kr.KeyIDs()[0]
	plain, err := store.New(srv.Client(), "r")
	if err != nil {
		t.Fatal(err)
	}
	sealed, err := store.New(srv.Client(), "r", store.WithEncryption(atrest.NewEnvelope(kr)))
	if err != nil {
		t.Fatal(err)
	}
	app := func(name string) *edgeproto.App {
		return &edgeproto.App{Key: &edgeproto.AppKey{Organization: "dev", Name: name, Version: "1"},
			EnvVars: []*edgeproto.EnvVar{{Name: "P", Secret: true, SecretValue: "Planted-Secret-" + name}}}
	}
	for i := range 3 {
		if _, err := store.NewKind[*edgeproto.App](plain).Create(ctx, app(fmt.Sprint("legacy", i))); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := store.NewKind[*edgeproto.App](sealed).Create(ctx, app("sealed")); err != nil {
		t.Fatal(err)
	}
	run := func(args ...string) (string, error) {
		var out, errOut bytes.Buffer
		args = append(args, "--etcd-endpoints", strings.Join(srv.Endpoints(), ","), "--encryption-key-file", keyFile, "--region", "r")
		err := keysMain(ctx, args, &out, &errOut)
		return out.String() + errOut.String(), err
	}
	mustRun := func(args ...string) string {
		t.Helper()
		out, err := run(args...)
		if err != nil {
			t.Fatalf("%v: %v\n%s", args, err, out)
		}
		return out
	}
	if out := mustRun("keys", "list"); !strings.Contains(out, "(plaintext)") || !hasLine(out, first, "true", "1") {
		t.Fatalf("keys list before rewrap:\n%s", out)
	}
	if out := mustRun("rewrap"); !strings.Contains(out, "rewrapped 3 of 4") {
		t.Fatalf("rewrap:\n%s", out)
	}
	resp, err := srv.Client().Get(ctx, "/edgekit/r/", clientv3.WithPrefix())
	if err != nil {
		t.Fatal(err)
	}
	for _, kv := range resp.Kvs {
		if bytes.Contains(kv.Value, []byte("Planted-Secret-")) {
			t.Errorf("after rewrap %s holds its secret in clear", kv.Key)
		}
	}
	out := mustRun("keys", "add")
	second := strings.Fields(strings.TrimPrefix(out, "added key "))[0]
	if out, err := run("keys", "remove", first); err == nil || !strings.Contains(err.Error(), "still seals 4 stored values") {
		t.Fatalf("removing a key in use: %v\n%s", err, out)
	}
	mustRun("rewrap")
	if out := mustRun("keys", "list"); !hasLine(out, second, "true", "4") || !hasLine(out, first, "false", "0") {
		t.Fatalf("keys list after the second rewrap:\n%s", out)
	}
	mustRun("keys", "remove", first)
	// Everything reads with the remaining key alone.
	kr2, err := atrest.OpenKeyFile(keyFile)
	if err != nil || len(kr2.KeyIDs()) != 1 {
		t.Fatalf("key file after remove: %v, %v", kr2.KeyIDs(), err)
	}
	st, err := store.New(srv.Client(), "r", store.WithEncryption(atrest.NewEnvelope(kr2)))
	if err != nil {
		t.Fatal(err)
	}
	apps, _, err := store.NewKind[*edgeproto.App](st).List(ctx)
	if err != nil || len(apps) != 4 || apps[0].EnvVars[0].SecretValue != "Planted-Secret-legacy0" {
		t.Fatalf("apps after rotation: %v, %v", apps, err)
	}
}

// hasLine reports whether out has a line whose fields are exactly
// fields.
func hasLine(out string, fields ...string) bool {
	for line := range strings.SplitSeq(out, "\n") {
		f := strings.Fields(line)
		if len(f) == len(fields) && strings.Join(f, " ") == strings.Join(fields, " ") {
			return true
		}
	}
	return false
}
