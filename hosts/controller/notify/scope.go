package notify

import (
	"github.com/edgekit/edgekit/edgeproto"
	notifyv1 "github.com/edgekit/edgekit/proto/edgekit/notify/v1"
	"google.golang.org/protobuf/proto"
)

// change is one object to send: a put carries the whole object, a delete
// an object with its key only.
type change struct {
	key    string // queue key: "<Kind>/<key string>"
	action notifyv1.UpdateAction
	obj    proto.Message
	rev    int64
}

// scope decides what one CRM needs: every flavor and the settings, its
// cloudlet, the trust policies of the cloudlet's organization, the
// clusters and instances on the cloudlet, the Apps those instances run,
// and the trust policy exceptions with entries on the cloudlet (with
// those entries only). It remembers what it sent so that an object leaving the scope is
// sent as a delete. Only the goroutine feeding the session's queue uses
// it.
type scope struct {
	cloudlet *edgeproto.CloudletKey
	org      string
	apps     map[string]*edgeproto.App // every App of the region
	appRefs  map[string]int            // App key -> instances on the cloudlet running it
	instApp  map[string]string         // key of an instance on the cloudlet -> its App's key
	sent     map[string]bool           // queue keys the CRM holds
}

func newScope(cloudlet *edgeproto.CloudletKey) *scope {
	return &scope{cloudlet: cloudlet, org: cloudlet.GetOrganization(), apps: map[string]*edgeproto.App{},
		appRefs: map[string]int{}, instApp: map[string]string{}, sent: map[string]bool{}}
}

func qkey(kind, key string) string { return kind + "/" + key }

func (sc *scope) putChange(kind, key string, obj proto.Message, rev int64) change {
	k := qkey(kind, key)
	sc.sent[k] = true
	return change{key: k, action: notifyv1.UpdateAction_UPDATE_ACTION_PUT, obj: obj, rev: rev}
}

// delChange sends the delete of a key the CRM holds; nothing otherwise.
func (sc *scope) delChange(out []change, kind, key string, stub func() (proto.Message, error), rev int64) []change {
	k := qkey(kind, key)
	if !sc.sent[k] {
		return out
	}
	obj, err := stub()
	if err != nil {
		return out // a key string of no object: nothing was sent under it
	}
	delete(sc.sent, k)
	return append(out, change{key: k, action: notifyv1.UpdateAction_UPDATE_ACTION_DELETE, obj: obj, rev: rev})
}

// put returns what to send for a created or changed object of kind.
func (sc *scope) put(d *kindDef, key string, obj proto.Message, rev int64) []change {
	stub := func() (proto.Message, error) { return d.stub(key) }
	switch o := obj.(type) {
	case *edgeproto.Flavor:
		return []change{sc.putChange(d.name, key, o, rev)}
	case *edgeproto.Cloudlet:
		if proto.Equal(o.GetKey(), sc.cloudlet) {
			return []change{sc.putChange(d.name, key, o, rev)}
		}
	case *edgeproto.TrustPolicy:
		if o.GetKey().GetOrganization() == sc.org {
			return []change{sc.putChange(d.name, key, o, rev)}
		}
		return sc.delChange(nil, d.name, key, stub, rev)
	case *edgeproto.App:
		sc.apps[key] = o
		if sc.appRefs[key] > 0 {
			return []change{sc.putChange(d.name, key, o, rev)}
		}
	case *edgeproto.ClusterInst:
		if proto.Equal(o.GetCloudletKey(), sc.cloudlet) {
			return []change{sc.putChange(d.name, key, o, rev)}
		}
		return sc.delChange(nil, d.name, key, stub, rev)
	case *edgeproto.TrustPolicyException:
		if local := sc.localTPE(o); local != nil {
			return []change{sc.putChange(d.name, key, local, rev)}
		}
		return sc.delChange(nil, d.name, key, stub, rev)
	case *edgeproto.AppInst:
		if !proto.Equal(o.GetCloudletKey(), sc.cloudlet) {
			return sc.removeInst(d, key, rev)
		}
		var out []change
		app := (&edgeproto.App{Key: o.GetAppKey()}).GetKeyString()
		if prev, ok := sc.instApp[key]; !ok || prev != app {
			if ok {
				out = sc.unrefApp(out, prev, rev)
			}
			sc.instApp[key] = app
			sc.appRefs[app]++
			if a := sc.apps[app]; a != nil && sc.appRefs[app] == 1 {
				out = append(out, sc.putChange(KindApp, app, a, rev))
			}
		}
		return append(out, sc.putChange(d.name, key, o, rev))
	}
	return nil
}

// localTPE is exc with only its instances entries on the scope's cloudlet,
// or nil when it has none there.
func (sc *scope) localTPE(exc *edgeproto.TrustPolicyException) *edgeproto.TrustPolicyException {
	var local []*edgeproto.TrustPolicyExceptionInstance
	for _, in := range exc.GetInstances() {
		if proto.Equal(in.GetCloudletKey(), sc.cloudlet) {
			local = append(local, in)
		}
	}
	if len(local) == 0 {
		return nil
	}
	out := &edgeproto.TrustPolicyException{Key: exc.GetKey(), State: exc.GetState(), OutboundSecurityRules: exc.GetOutboundSecurityRules(),
		Instances: local, Deleting: exc.GetDeleting()}
	return out.Clone()
}

// KindApp is the store's name of Apps.
const KindApp = "App"

// remove returns what to send for a deleted object of kind.
func (sc *scope) remove(d *kindDef, key string, rev int64) []change {
	switch d.name {
	case KindApp:
		delete(sc.apps, key)
	case "AppInst":
		return sc.removeInst(d, key, rev)
	}
	return sc.delChange(nil, d.name, key, func() (proto.Message, error) { return d.stub(key) }, rev)
}

// removeInst sends the delete of an instance that left the cloudlet, and of
// its App when no other instance on the cloudlet runs it.
func (sc *scope) removeInst(d *kindDef, key string, rev int64) []change {
	out := sc.delChange(nil, d.name, key, func() (proto.Message, error) { return d.stub(key) }, rev)
	if app, ok := sc.instApp[key]; ok {
		delete(sc.instApp, key)
		out = sc.unrefApp(out, app, rev)
	}
	return out
}

func (sc *scope) unrefApp(out []change, app string, rev int64) []change {
	sc.appRefs[app]--
	if sc.appRefs[app] > 0 {
		return out
	}
	delete(sc.appRefs, app)
	return sc.delChange(out, KindApp, app, func() (proto.Message, error) {
		k, err := edgeproto.ParseAppKeyString(app)
		return &edgeproto.App{Key: k}, err
	}, rev)
}
