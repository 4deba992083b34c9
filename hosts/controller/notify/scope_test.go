package notify

import (
	"slices"
	"testing"

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/internal/store"
	"github.com/edgekit/edgekit/internal/testenv/etcdtest"
	notifyv1 "github.com/edgekit/edgekit/proto/edgekit/notify/v1"
	"google.golang.org/protobuf/proto"
)

// changesOf renders changes as "put App/key" lines.
func changesOf(cs []change) []string {
	var out []string
	for _, c := range cs {
		verb := "put"
		if c.action == notifyv1.UpdateAction_UPDATE_ACTION_DELETE {
			verb = "del"
		}
		out = append(out, verb+" "+c.key)
	}
	return out
}

func TestScopeSendsWhatTheCRMNeedsAndNothingElse(t *testing.T) {
	t.Parallel()
	st, err := store.New(etcdtest.New(t).Client(), "test")
	if err != nil {
		t.Fatal(err)
	}
	k := newKinds(st)
	mine := &edgeproto.CloudletKey{Organization: "op", Name: "site1"}
	other := &edgeproto.CloudletKey{Organization: "op2", Name: "site2"}
	sc := newScope(mine)
	app := &edgeproto.App{Key: &edgeproto.AppKey{Organization: "dev", Name: "web", Version: "1"},
		EnvVars: []*edgeproto.EnvVar{{Name: "T", Secret: true, SecretValue: "s"}}}
	inst := func(name string, cl *edgeproto.CloudletKey) *edgeproto.AppInst {
		return &edgeproto.AppInst{Key: &edgeproto.AppInstKey{Organization: "dev", Name: name}, AppKey: app.Key, CloudletKey: cl}
	}
	put := func(kind string, obj proto.Message) []string {
		return changesOf(sc.put(k.byName[kind], obj.(interface{ GetKeyString() string }).GetKeyString(), obj, 1))
	}
	del := func(kind, key string) []string { return changesOf(sc.remove(k.byName[kind], key, 2)) }
	steps := []struct {
		what string
		got  []string
		want []string
	}{
		{"an App nobody on the cloudlet runs", put("App", app), nil},
		{"an instance on another cloudlet", put("AppInst", inst("x", other)), nil},
		{"the first instance on the cloudlet brings its App", put("AppInst", inst("a", mine)),
			[]string{"put App/" + app.GetKeyString(), "put AppInst/name=a,organization=dev"}},
		{"a second instance of the App", put("AppInst", inst("b", mine)), []string{"put AppInst/name=b,organization=dev"}},
		{"a change of the App in scope", put("App", app), []string{"put App/" + app.GetKeyString()}},
		{"one instance goes: the App stays", del("AppInst", "name=a,organization=dev"), []string{"del AppInst/name=a,organization=dev"}},
		{"the last instance goes: so does the App", del("AppInst", "name=b,organization=dev"),
			[]string{"del AppInst/name=b,organization=dev", "del App/" + app.GetKeyString()}},
		{"a deleted instance of another cloudlet", del("AppInst", "name=x,organization=dev"), nil},
		{"another cloudlet", put("Cloudlet", &edgeproto.Cloudlet{Key: other}), nil},
		{"the cloudlet", put("Cloudlet", &edgeproto.Cloudlet{Key: mine}), []string{"put Cloudlet/organization=op,name=site1"}},
		{"a trust policy of the cloudlet's organization", put("TrustPolicy", &edgeproto.TrustPolicy{Key: &edgeproto.TrustPolicyKey{Organization: "op", Name: "p"}}),
			[]string{"put TrustPolicy/organization=op,name=p"}},
		{"another organization's trust policy", put("TrustPolicy", &edgeproto.TrustPolicy{Key: &edgeproto.TrustPolicyKey{Organization: "op2", Name: "p"}}), nil},
		{"a cluster elsewhere", put("ClusterInst", &edgeproto.ClusterInst{Key: &edgeproto.ClusterKey{Organization: "dev", Name: "c"}, CloudletKey: other}), nil},
		{"a flavor", put("Flavor", &edgeproto.Flavor{Key: &edgeproto.FlavorKey{Name: "f"}}), []string{"put Flavor/name=f"}},
	}
	for _, s := range steps {
		if !slices.Equal(s.got, s.want) {
			t.Errorf("%s: sent %q, want %q", s.what, s.got, s.want)
		}
	}
	// The App sent carries its secret: the CRM needs it to run the app.
	sc2 := newScope(mine)
	sc2.put(k.byName["App"], app.GetKeyString(), app, 1)
	cs := sc2.put(k.byName["AppInst"], "name=a,organization=dev", inst("a", mine), 1)
	if a, ok := cs[0].obj.(*edgeproto.App); !ok || a.EnvVars[0].SecretValue != "s" {
		t.Errorf("the App sent to the CRM that runs it lacks its secret: %v", cs[0].obj)
	}
}

func TestScopeSendsExceptionsWithTheCloudletsEntriesOnly(t *testing.T) {
	t.Parallel()
	st, err := store.New(etcdtest.New(t).Client(), "test")
	if err != nil {
		t.Fatal(err)
	}
	k := newKinds(st)
	mine := &edgeproto.CloudletKey{Organization: "op", Name: "site1"}
	other := &edgeproto.CloudletKey{Organization: "op", Name: "site2"}
	sc := newScope(mine)
	key := &edgeproto.TrustPolicyExceptionKey{AppKey: &edgeproto.AppKey{Organization: "dev", Name: "web"},
		CloudletPoolKey: &edgeproto.CloudletPoolKey{Organization: "op", Name: "p"}, Name: "dns"}
	exc := func(cls ...*edgeproto.CloudletKey) *edgeproto.TrustPolicyException {
		e := &edgeproto.TrustPolicyException{Key: key, State: edgeproto.TrustPolicyExceptionState_TRUST_POLICY_EXCEPTION_STATE_ACTIVE}
		for i, cl := range cls {
			e.Instances = append(e.Instances, &edgeproto.TrustPolicyExceptionInstance{
				AppInstKey: &edgeproto.AppInstKey{Organization: "dev", Name: string(rune('a' + i))}, CloudletKey: cl,
				State: edgeproto.TrackedState_TRACKED_STATE_CREATE_REQUESTED})
		}
		return e
	}
	d := k.byName["TrustPolicyException"]
	ks := (&edgeproto.TrustPolicyException{Key: key}).GetKeyString()
	if got := changesOf(sc.put(d, ks, exc(other), 1)); got != nil {
		t.Fatalf("an exception with entries elsewhere only: sent %q", got)
	}
	cs := sc.put(d, ks, exc(other, mine), 2)
	if got := changesOf(cs); !slices.Equal(got, []string{"put TrustPolicyException/" + ks}) {
		t.Fatalf("an exception with an entry on the cloudlet: sent %q", got)
	}
	sent := cs[0].obj.(*edgeproto.TrustPolicyException)
	if len(sent.Instances) != 1 || sent.Instances[0].GetAppInstKey().GetName() != "b" {
		t.Fatalf("entries sent = %v, want only the cloudlet's (b)", sent.Instances)
	}
	if got := changesOf(sc.put(d, ks, exc(other), 3)); !slices.Equal(got, []string{"del TrustPolicyException/" + ks}) {
		t.Fatalf("the cloudlet's entry went: sent %q, want the delete", got)
	}
	sc.put(d, ks, exc(mine), 4)
	if got := changesOf(sc.remove(d, ks, 5)); !slices.Equal(got, []string{"del TrustPolicyException/" + ks}) {
		t.Fatalf("the exception was deleted: sent %q", got)
	}
}
