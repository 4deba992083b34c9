package atrest_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/edgekit/edgekit/atrest"
)

func keyring(t *testing.T) *atrest.FileKeyring {
	t.Helper()
	k, created, err := atrest.EnsureKeyFile(filepath.Join(t.TempDir(), atrest.DefaultKeyFileName))
	if err != nil {
		t.Fatal(err)
	}
	if !created {
		t.Fatal("EnsureKeyFile did not report creating the file")
	}
	return k
}

func TestEnsureKeyFileCreatesPrivateFileOnce(t *testing.T) {
	k := keyring(t)
	fi, err := os.Stat(k.Path())
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Fatalf("key file mode %v, want 0600", fi.Mode().Perm())
	}
	again, created, err := atrest.EnsureKeyFile(k.Path())
	if err != nil || created {
		t.Fatalf("second EnsureKeyFile: created %v, err %v", created, err)
	}
	if got, want := again.KeyIDs(), k.KeyIDs(); len(got) != 1 || got[0] != want[0] {
		t.Fatalf("keys after reopening: %v, want %v", got, want)
	}
	if err := os.Chmod(k.Path(), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := atrest.OpenKeyFile(k.Path()); err == nil || !strings.Contains(err.Error(), "chmod 600") {
		t.Fatalf("a world-readable key file: err %v, want a refusal saying chmod 600", err)
	}
}

func TestSealOpenBindsValueToItsKey(t *testing.T) {
	env := atrest.NewEnvelope(keyring(t))
	secret := []byte(`{"secretValue":"Planted-Secret-777"}`)
	sealed, err := env.Seal(secret, []byte("/edgekit/r/App/a"))
	if err != nil {
		t.Fatal(err)
	}
	if !atrest.IsSealed(sealed) || bytes.Contains(sealed, []byte("Planted-Secret-777")) {
		t.Fatalf("sealed value holds the plaintext or lacks the magic: %q", sealed)
	}
	got, err := env.Open(sealed, []byte("/edgekit/r/App/a"))
	if err != nil || !bytes.Equal(got, secret) {
		t.Fatalf("Open: %q, %v", got, err)
	}
	if _, err := env.Open(sealed, []byte("/edgekit/r/App/b")); !errors.Is(err, atrest.ErrUndecryptable) {
		t.Fatalf("value moved to another key: err %v, want ErrUndecryptable", err)
	}
	for i := range sealed {
		flipped := bytes.Clone(sealed)
		flipped[i] ^= 0x01
		if _, err := env.Open(flipped, []byte("/edgekit/r/App/a")); err == nil {
			t.Fatalf("a value with byte %d flipped opened", i)
		}
	}
	if _, err := env.Open(sealed[:len(sealed)/2], []byte("/edgekit/r/App/a")); err == nil {
		t.Fatal("a value cut in half opened")
	}
	other := atrest.NewEnvelope(keyring(t))
	if _, err := other.Open(sealed, []byte("/edgekit/r/App/a")); !errors.Is(err, atrest.ErrUnknownKey) {
		t.Fatalf("another keyring: err %v, want ErrUnknownKey", err)
	}
}

func TestRotationOldKeysStillOpen(t *testing.T) {
	k := keyring(t)
	first := k.KeyIDs()[0]
	old := atrest.NewEnvelope(k)
	sealed, err := old.Seal([]byte("v1"), []byte("k"))
	if err != nil {
		t.Fatal(err)
	}
	id, err := atrest.AddKey(k.Path())
	if err != nil {
		t.Fatal(err)
	}
	k2, err := atrest.OpenKeyFile(k.Path())
	if err != nil {
		t.Fatal(err)
	}
	if ids := k2.KeyIDs(); len(ids) != 2 || ids[0] != id || ids[1] != first {
		t.Fatalf("keys after AddKey: %v, want [%s %s]", ids, id, first)
	}
	env := atrest.NewEnvelope(k2)
	if cur, _ := env.CurrentKeyID(); cur != id {
		t.Fatalf("current key %q, want the new %q", cur, id)
	}
	if got, err := env.Open(sealed, []byte("k")); err != nil || string(got) != "v1" {
		t.Fatalf("a value of the old key: %q, %v", got, err)
	}
	// The process started before the new key reads values sealed with it.
	sealed2, err := env.Seal([]byte("v2"), []byte("k"))
	if err != nil {
		t.Fatal(err)
	}
	if got, err := old.Open(sealed2, []byte("k")); err != nil || string(got) != "v2" {
		t.Fatalf("an older process opening a value of the new key: %q, %v", got, err)
	}
	if err := atrest.RemoveKey(k.Path(), id); err == nil {
		t.Fatal("RemoveKey removed the current key")
	}
	if err := atrest.RemoveKey(k.Path(), first); err != nil {
		t.Fatal(err)
	}
	k3, err := atrest.OpenKeyFile(k.Path())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := atrest.NewEnvelope(k3).Open(sealed, []byte("k")); !errors.Is(err, atrest.ErrUnknownKey) {
		t.Fatalf("a value of a removed key: err %v, want ErrUnknownKey", err)
	}
}

func TestKeyFileErrorsNameTheLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "keys")
	if err := os.WriteFile(path, []byte("# c\nk1 notbase64!\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := atrest.OpenKeyFile(path); err == nil || !strings.Contains(err.Error(), path+":2") {
		t.Fatalf("bad key line: err %v, want it to name %s:2", err, path)
	}
}

// BenchmarkSeal compares a cached data key with one wrapped per value.
func BenchmarkSeal(b *testing.B) {
	dir := b.TempDir()
	k, _, err := atrest.EnsureKeyFile(filepath.Join(dir, "keys"))
	if err != nil {
		b.Fatal(err)
	}
	val := bytes.Repeat([]byte("x"), 512)
	for _, bc := range []struct {
		name string
		env  *atrest.Envelope
	}{{"cached", atrest.NewEnvelope(k)}, {"per-value", atrest.NewEnvelope(k, atrest.DataKeyPerValue())}} {
		b.Run(bc.name, func(b *testing.B) {
			for b.Loop() {
				if _, err := bc.env.Seal(val, []byte("/edgekit/r/App/a")); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
