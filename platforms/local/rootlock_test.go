package local

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/edgekit/edgekit/edgeproto"
)

// TestSecondPlatformOnRoot: a second platform over a state directory in
// use opens, with the same key (the same process markers); a closed
// platform refuses work, and closing twice is a no-op.
func TestSecondPlatformOnRoot(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	first, err := New(Config{Root: root})
	if err != nil {
		t.Fatal(err)
	}
	second, err := New(Config{Root: root})
	if err != nil {
		t.Fatalf("second New on a directory in use: %v", err)
	}
	defer second.Close()
	if first.id != second.id {
		t.Errorf("two platforms over one directory have process identities %s and %s", first.id, second.id)
	}
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}
	if err := first.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if err := first.InitCloudlet(t.Context(), &edgeproto.Cloudlet{Key: &edgeproto.CloudletKey{Organization: "o", Name: "n"}}, nil, nil); !errors.Is(err, ErrClosed) {
		t.Errorf("call after Close: %v, want ErrClosed", err)
	}
	if err := second.InitCloudlet(t.Context(), &edgeproto.Cloudlet{Key: &edgeproto.CloudletKey{Organization: "o", Name: "n"}}, nil, nil); err != nil {
		t.Errorf("the other platform after one closed: %v", err)
	}
}

// TestConfigHashIsKeyed: the configuration hash in a state file is keyed
// with the state directory's own random key: it is not the plain SHA-256
// of the configuration (which would let a dictionary guess a secret
// value), and two state directories hash the same App differently.
func TestConfigHashIsKeyed(t *testing.T) {
	t.Parallel()
	const secret = "hunter2"
	app := newApp()
	app.EnvVars = append(app.EnvVars, &edgeproto.EnvVar{Name: "TOKEN", Secret: true, SecretValue: secret})
	var hashes []string
	for range 2 {
		e := newEnv(t)
		e.createCluster(e.cluster)
		inst := e.newInst("a1")
		if _, err := e.p.CreateAppInst(e.ctx(), e.cluster, app, inst, e.res, nil); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(filepath.Join(e.mustAppDir(inst), appStateFile))
		if err != nil {
			t.Fatal(err)
		}
		var rec appRecord
		if err := json.Unmarshal(b, &rec); err != nil {
			t.Fatal(err)
		}
		hashes = append(hashes, rec.ConfigHash)
		if st, err := os.Stat(filepath.Join(e.root, keyFileName)); err != nil || st.Mode().Perm() != 0o600 {
			t.Errorf("key file: %v, %v", st, err)
		}
	}
	if hashes[0] == hashes[1] {
		t.Errorf("two state directories give the same hash %s: it is not keyed", hashes[0])
	}
	// The unkeyed hash of the configuration, as a dictionary attack would
	// compute it for each guess of the secret.
	h := sha256.New()
	writeConfig(h, app.Command, nil, app.EnvVars, app.Ports)
	if unkeyed := hex.EncodeToString(h.Sum(nil)); hashes[0] == unkeyed {
		t.Errorf("config_hash is the plain SHA-256 of the configuration")
	}
}
