package local

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/edgekit/edgekit/edgeproto"
)

// TestNeverCreatableKeys: deleting what could never have been created (an
// empty name, a 10,000-byte name) succeeds; creating with an empty name or
// an empty cloudlet key fails with a short ErrInvalidObject and creates
// nothing; no error carries a huge name or the state directory's path.
func TestNeverCreatableKeys(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	huge := strings.Repeat("x", 10000)
	for _, name := range []string{"", huge} {
		ci := &edgeproto.ClusterInst{Key: &edgeproto.ClusterKey{Organization: "dev", Name: name}, CloudletKey: e.cloudlet.Key}
		inst := &edgeproto.AppInst{Key: &edgeproto.AppInstKey{Organization: "dev", Name: name}, ClusterKey: ci.Key, CloudletKey: e.cloudlet.Key}
		cl := &edgeproto.Cloudlet{Key: &edgeproto.CloudletKey{Organization: "op", Name: name}}
		if err := e.p.DeleteAppInst(e.ctx(), ci, newApp(), inst, e.res, nil); err != nil {
			t.Errorf("delete of instance named %.10q: %v", name, err)
		}
		if err := e.p.DeleteCluster(e.ctx(), e.cloudlet, ci, e.res, nil); err != nil {
			t.Errorf("delete of cluster named %.10q: %v", name, err)
		}
		if err := e.p.CleanupCloudlet(e.ctx(), cl, nil); err != nil {
			t.Errorf("cleanup of cloudlet named %.10q: %v", name, err)
		}
	}
	for what, err := range map[string]error{
		"empty cloudlet key": e.p.InitCloudlet(e.ctx(), &edgeproto.Cloudlet{Key: &edgeproto.CloudletKey{}}, e.res, nil),
		"nil cloudlet key":   e.p.InitCloudlet(e.ctx(), &edgeproto.Cloudlet{}, e.res, nil),
		"empty cluster name": e.p.CreateCluster(e.ctx(), e.cloudlet, &edgeproto.ClusterInst{Key: &edgeproto.ClusterKey{Organization: "dev"}, CloudletKey: e.cloudlet.Key}, e.res, nil),
	} {
		if !errors.Is(err, ErrInvalidObject) || len(err.Error()) > 120 {
			t.Errorf("%s: %v, want a short ErrInvalidObject", what, err)
		}
	}
	if ents, _ := os.ReadDir(filepath.Join(e.root, cloudletsDir)); len(ents) != 0 {
		t.Errorf("directories created for invalid keys: %v", ents)
	}
	// An operation on an absent cluster with a huge name.
	ci := &edgeproto.ClusterInst{Key: &edgeproto.ClusterKey{Organization: "dev", Name: huge}, CloudletKey: e.cloudlet.Key}
	_, err := e.p.CreateAppInst(e.ctx(), ci, newApp(), e.newInst("a1"), e.res, nil)
	if !errors.Is(err, ErrClusterNotFound) {
		t.Fatalf("create in an absent cluster: %v", err)
	}
	if len(err.Error()) > 200 || strings.Contains(err.Error(), e.root) {
		t.Errorf("error is %d bytes and names the state directory: %.300s", len(err.Error()), err)
	}
}

// TestLongKeysGetHashedDirectories: a key too long for a directory name
// still works (create, list, delete) through a hashed directory name.
func TestLongKeysGetHashedDirectories(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.cluster.Key.Name = strings.Repeat("c", 200)
	e.createCluster(e.cluster)
	inst := e.newInst(strings.Repeat("i.", 100))
	if _, err := e.p.CreateAppInst(e.ctx(), e.cluster, newApp(), inst, e.res, nil); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(filepath.Base(e.mustAppDir(inst)), hashedPrefix) {
		t.Errorf("directory %s is not hashed", e.mustAppDir(inst))
	}
	inv, err := e.p.ListInsts(e.ctx(), e.cloudlet)
	if err != nil {
		t.Fatal(err)
	}
	if len(inv.AppInsts) != 1 || !inv.AppInsts[0].Key.Equal(inst.Key) || !inv.AppInsts[0].ClusterKey.Equal(e.cluster.Key) {
		t.Errorf("listed %v", inv.AppInsts)
	}
	if err := e.p.DeleteCluster(e.ctx(), e.cloudlet, e.cluster, e.res, nil); err != nil {
		t.Fatal(err)
	}
	checkNoneRunning(t, e.root)
}
