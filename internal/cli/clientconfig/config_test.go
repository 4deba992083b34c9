package clientconfig_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/edgekit/edgekit/internal/cli/clientconfig"
)

func TestSaveLoadLookup(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "sub", "edgectl.yaml")
	c := &clientconfig.Config{CurrentContext: "local"}
	c.Set(clientconfig.Context{Name: "local", Addr: "127.0.0.1:1", TokenFile: "admin.token", CAFile: "/abs/ca.pem"})
	c.Set(clientconfig.Context{Name: "plain", Addr: "127.0.0.1:2", Insecure: true})
	c.Set(clientconfig.Context{Name: "local", Addr: "127.0.0.1:3", TokenFile: "admin.token"})
	if err := c.Save(path); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want 0600", st.Mode().Perm())
	}
	data, _ := os.ReadFile(path)
	for _, want := range []string{"current-context: local", "token-file: admin.token", "insecure: true", "addr: 127.0.0.1:3"} {
		if !strings.Contains(string(data), want) {
			t.Errorf("file lacks %q:\n%s", want, data)
		}
	}
	got, err := clientconfig.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	cur, err := got.Lookup("")
	if err != nil {
		t.Fatal(err)
	}
	if cur.Addr != "127.0.0.1:3" || cur.TokenFile != filepath.Join(dir, "sub", "admin.token") || cur.CAFile != "" {
		t.Errorf("current context %+v", cur)
	}
	if len(got.Contexts) != 2 || got.Contexts[0].TokenFile != "admin.token" {
		t.Errorf("contexts as stored %+v: want two, relative paths kept", got.Contexts)
	}
	if _, err := got.Lookup("nope"); !errors.Is(err, clientconfig.ErrNoContext) {
		t.Errorf("Lookup(nope) = %v", err)
	}
	if !got.Delete("local") || got.CurrentContext != "" || got.Delete("local") {
		t.Errorf("Delete: %+v", got)
	}
	if ctx, err := got.Lookup(""); err != nil || ctx.Name != "" {
		t.Errorf("Lookup with no current context = %+v, %v", ctx, err)
	}
}

func TestLoadMissingAndBadFiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	c, err := clientconfig.Load(filepath.Join(dir, "none.yaml"))
	if err != nil || len(c.Contexts) != 0 {
		t.Fatalf("missing file: %+v, %v", c, err)
	}
	cases := map[string]string{
		"typo.yaml":    "contexts:\n- name: a\n  adress: x\n",
		"dup.yaml":     "contexts:\n- name: a\n- name: a\n",
		"noname.yaml":  "contexts:\n- addr: x\n",
		"current.yaml": "current-context: b\ncontexts:\n- name: a\n",
		"garbage.yaml": "[1, 2",
	}
	for name, content := range cases {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := clientconfig.Load(p); err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("%s: %v, want an error naming the file", name, err)
		}
	}
}

func TestDefaultPath(t *testing.T) {
	t.Parallel()
	p, err := clientconfig.DefaultPath(func(k string) string {
		if k == clientconfig.EnvPath {
			return "/x/y.yaml"
		}
		return ""
	})
	if err != nil || p != "/x/y.yaml" {
		t.Errorf("with %s: %q, %v", clientconfig.EnvPath, p, err)
	}
	p, err = clientconfig.DefaultPath(func(string) string { return "" })
	if err == nil && !strings.HasSuffix(p, filepath.Join("edgekit", "edgectl.yaml")) {
		t.Errorf("default: %q", p)
	}
}
