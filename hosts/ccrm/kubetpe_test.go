package ccrm_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	netv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/hosts/ccrm/ccrmtest"
	"github.com/edgekit/edgekit/hosts/controller/controllertest"
	"github.com/edgekit/edgekit/internal/store"
	"github.com/edgekit/edgekit/platforms/kubernetes"
	"google.golang.org/protobuf/proto"
)

// egressOf renders a NetworkPolicy's egress rules: "dns" for the rule the
// platform always adds (port 53), "*" for a rule allowing everything, and
// "PROTO port[-end] cidr" for the others.
func egressOf(np *netv1.NetworkPolicy) []string {
	var out []string
	for _, r := range np.Spec.Egress {
		switch {
		case len(r.To) == 0 && len(r.Ports) == 0:
			out = append(out, "*")
		case len(r.To) == 0 && len(r.Ports) > 0 && r.Ports[0].Port != nil && r.Ports[0].Port.IntVal == 53:
			out = append(out, "dns")
		default:
			for _, to := range r.To {
				for _, pt := range r.Ports {
					port := ""
					if pt.Port != nil {
						port = pt.Port.String()
					}
					if pt.EndPort != nil {
						port += fmt.Sprintf("-%d", *pt.EndPort)
					}
					cidr := "?"
					if to.IPBlock != nil {
						cidr = to.IPBlock.CIDR
					}
					out = append(out, fmt.Sprintf("%s %s %s", *pt.Protocol, port, cidr))
				}
			}
		}
	}
	return out
}

// A trust policy exception on a Kubernetes cloudlet served by two CCRM
// replica processes, end to end on the real control plane: approved, it
// becomes one egress NetworkPolicy per instance of its App, with the
// exception's protocols, ports and CIDRs, selecting exactly that
// instance's pods (not the pods of another App's instance in the same
// cluster), and each instance's entry in the exception is READY with its
// cloudlet and cluster; while the cloudlet has no trust policy the
// exception also allows everything (it must not restrict pods that nothing
// restricts) and a trust policy given to the cloudlet closes it; deleting
// one instance removes its policy only; emptying the pool and rejecting
// the exception remove every policy and entry, approving it again brings
// them back; a rule NetworkPolicies cannot express fails the entry with
// the platform's reason, new rules are applied; deleting the exception
// removes everything.
func TestKubernetesTrustPolicyExceptionEndToEnd(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	r := newK8sRegion(t, ctx, "tpe", k8sOptions{})
	admin := r.Env.Conn(r.Env.AdminToken())
	pools := edgeproto.NewCloudletPoolServiceClient(admin)
	tpes := edgeproto.NewTrustPolicyExceptionServiceClient(admin)
	ck := r.readyCluster(t, ctx, "tpe", 16, 8192)

	// Two instances of the App, and one of another App, in one cluster.
	_, ns, dep1 := r.readyInstance(t, ctx, "w1", ck)
	w2, _, dep2 := r.readyInstance(t, ctx, "w2", ck)
	other := &edgeproto.App{Key: &edgeproto.AppKey{Organization: "dev", Name: "other", Version: "1"},
		Deployment: kubernetes.PlatformType, ImageType: edgeproto.ImageType_IMAGE_TYPE_DOCKER, ImagePath: "registry.example/other:1",
		Ports: []*edgeproto.Port{{Proto: edgeproto.PortProtocol_PORT_PROTOCOL_TCP, InternalPort: 8080}}}
	if _, err := r.apps.CreateApp(ctx, &edgeproto.CreateAppRequest{App: other}); err != nil {
		t.Fatal(err)
	}
	p, err := ccrmtest.Wait(r.AppInst.CreateAppInst(ctx, &edgeproto.CreateAppInstRequest{AppInst: &edgeproto.AppInst{
		Key: &edgeproto.AppInstKey{Organization: "dev", Name: "o1"}, AppKey: other.Key, ClusterKey: ck}}))
	r.want(t, "create the other App's instance", p, err, edgeproto.TrackedState_TRACKED_STATE_READY)
	// The pods of each instance carry its label (the Deployment's template).
	instOf := map[string]string{} // label value -> instance
	for inst, dep := range map[string]string{"w1": dep1, "w2": dep2} {
		d, err := r.cs.AppsV1().Deployments(ns).Get(ctx, dep, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		instOf[d.Spec.Template.Labels[kubernetes.LabelAppInst]] = inst
	}
	deps := map[string]string{"w1": dep1, "w2": dep2}

	poolKey := &edgeproto.CloudletPoolKey{Organization: r.cloudlet.Organization, Name: "p1"}
	setPool := func(cloudlets ...string) {
		t.Helper()
		if _, err := pools.UpdateCloudletPool(ctx, &edgeproto.UpdateCloudletPoolRequest{CloudletPool: &edgeproto.CloudletPool{Key: poolKey, Cloudlets: cloudlets},
			Fields: []string{edgeproto.CloudletPoolFieldCloudlets}}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := pools.CreateCloudletPool(ctx, &edgeproto.CreateCloudletPoolRequest{CloudletPool: &edgeproto.CloudletPool{
		Key: poolKey, Cloudlets: []string{r.cloudlet.Name}, DeveloperOrganizations: []string{"dev"}}}); err != nil {
		t.Fatal(err)
	}
	excKey := &edgeproto.TrustPolicyExceptionKey{AppKey: r.app.Key, CloudletPoolKey: poolKey, Name: "db"}
	if _, err := tpes.CreateTrustPolicyException(ctx, &edgeproto.CreateTrustPolicyExceptionRequest{TrustPolicyException: &edgeproto.TrustPolicyException{
		Key: excKey, OutboundSecurityRules: []*edgeproto.SecurityRule{
			{Protocol: "tcp", PortRangeMin: 5432, PortRangeMax: 5432, RemoteCidr: "10.2.0.0/16"},
			{Protocol: "udp", PortRangeMin: 1000, PortRangeMax: 2000, RemoteCidr: "192.168.0.0/24"}}}}); err != nil {
		t.Fatal(err)
	}
	setState := func(s edgeproto.TrustPolicyExceptionState) {
		t.Helper()
		if _, err := tpes.UpdateTrustPolicyException(ctx, &edgeproto.UpdateTrustPolicyExceptionRequest{
			TrustPolicyException: &edgeproto.TrustPolicyException{Key: excKey, State: s},
			Fields:               []string{edgeproto.TrustPolicyExceptionFieldState}}); err != nil {
			t.Fatal(err)
		}
	}
	kind := store.NewKind[*edgeproto.TrustPolicyException](r.Env.Store)
	excKS := (&edgeproto.TrustPolicyException{Key: excKey}).GetKeyString()
	// stored is the exception as the controller stores it; nil once gone.
	stored := func() *edgeproto.TrustPolicyException {
		e, _, err := kind.Get(ctx, excKS)
		if errors.Is(err, store.ErrNotFound) {
			return nil
		}
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	// policies are the exception NetworkPolicies of the cluster's
	// namespace, by the instance whose pods they select ("?<name>" for
	// one selecting no instance of the App).
	policies := func() map[string]*netv1.NetworkPolicy {
		l, err := r.cs.NetworkingV1().NetworkPolicies(ns).List(ctx, metav1.ListOptions{LabelSelector: kubernetes.LabelTrust + "=exception"})
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]*netv1.NetworkPolicy{}
		for i := range l.Items {
			np := &l.Items[i]
			name, ok := instOf[np.Spec.PodSelector.MatchLabels[kubernetes.LabelAppInst]]
			if !ok || len(np.Spec.PodSelector.MatchLabels) != 1 {
				name = "?" + np.Name
			}
			out[name] = np
		}
		return out
	}
	entries := func(e *edgeproto.TrustPolicyException) []string {
		var out []string
		for _, in := range e.GetInstances() {
			out = append(out, in.GetAppInstKey().GetName()+"="+strings.TrimPrefix(in.GetState().String(), "TRACKED_STATE_"))
		}
		return out
	}
	// settled waits until the instances with a policy and the entries of
	// the exception are want (READY entries).
	settled := func(what string, want ...string) {
		t.Helper()
		var wantEntries []string
		for _, w := range want {
			wantEntries = append(wantEntries, w+"=READY")
		}
		var lastPolicies []string
		var lastEntries []string
		defer func() {
			if t.Failed() {
				t.Logf("last seen: policies of %v, entries %v", lastPolicies, lastEntries)
			}
		}()
		controllertest.WaitFor(t, 60*time.Second, what, func() bool {
			lastPolicies = lastPolicies[:0]
			for name := range policies() {
				lastPolicies = append(lastPolicies, name)
			}
			slices.Sort(lastPolicies)
			lastEntries = entries(stored())
			return slices.Equal(lastPolicies, want) && slices.Equal(lastEntries, wantEntries)
		})
	}
	wantEgress := func(what string, want ...string) {
		t.Helper()
		for inst, np := range policies() {
			if got := egressOf(np); !slices.Equal(got, want) {
				t.Errorf("%s: egress of the exception's policy of %s = %q, want %q", what, inst, got, want)
			}
		}
	}
	rules := []string{"dns", "TCP 5432 10.2.0.0/16", "UDP 1000-2000 192.168.0.0/24"}

	// Approved: a policy per instance of the App, on its pods only.
	setState(edgeproto.TrustPolicyExceptionState_TRUST_POLICY_EXCEPTION_STATE_ACTIVE)
	settled("the approved exception applied to w1 and w2", "w1", "w2")
	for inst, np := range policies() {
		sel := metav1.FormatLabelSelector(&np.Spec.PodSelector)
		pods, err := r.cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: sel})
		if err != nil {
			t.Fatal(err)
		}
		if len(pods.Items) == 0 {
			t.Errorf("the exception's policy of %s (%s) selects no pod", inst, sel)
		}
		for _, pod := range pods.Items {
			if !strings.HasPrefix(pod.Name, deps[inst]+"-") {
				t.Errorf("the exception's policy of %s selects pod %s, not one of its Deployment %s", inst, pod.Name, deps[inst])
			}
		}
		if !slices.Equal(np.Spec.PolicyTypes, []netv1.PolicyType{netv1.PolicyTypeEgress}) {
			t.Errorf("the exception's policy of %s has types %v, want Egress", inst, np.Spec.PolicyTypes)
		}
	}
	for _, in := range stored().GetInstances() {
		if !proto.Equal(in.GetCloudletKey(), r.cloudlet) || in.GetClusterKey().GetName() != ck.Name || len(in.GetErrors()) > 0 {
			t.Errorf("entry of %s: cloudlet %v, cluster %v, errors %q; want %v, %v, none", in.GetAppInstKey().GetName(),
				in.GetCloudletKey(), in.GetClusterKey(), in.GetErrors(), r.cloudlet, ck)
		}
	}
	// No trust policy on the cloudlet: the exception allows everything.
	wantEgress("without a trust policy", append(rules, "*")...)

	// A trust policy given to the cloudlet closes the exceptions.
	if _, err := edgeproto.NewTrustPolicyServiceClient(admin).CreateTrustPolicy(ctx, &edgeproto.CreateTrustPolicyRequest{TrustPolicy: &edgeproto.TrustPolicy{
		Key:                   &edgeproto.TrustPolicyKey{Organization: r.cloudlet.Organization, Name: "tp"},
		OutboundSecurityRules: []*edgeproto.SecurityRule{{Protocol: "tcp", PortRangeMin: 443, PortRangeMax: 443, RemoteCidr: "10.1.0.0/16"}}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := ccrmtest.Wait(r.Cloudlet.UpdateCloudlet(ctx, &edgeproto.UpdateCloudletRequest{
		Cloudlet: &edgeproto.Cloudlet{Key: r.cloudlet, TrustPolicy: "tp"}, Fields: []string{edgeproto.CloudletFieldTrustPolicy}})); err != nil {
		t.Fatal(err)
	}
	controllertest.WaitFor(t, 60*time.Second, "the cloudlet's trust policy in the cluster's namespace", func() bool {
		l, err := r.cs.NetworkingV1().NetworkPolicies(ns).List(ctx, metav1.ListOptions{LabelSelector: kubernetes.LabelTrust + "=policy"})
		return err == nil && len(l.Items) == 1
	})
	controllertest.WaitFor(t, 60*time.Second, "the exceptions closed by the trust policy", func() bool {
		for _, np := range policies() {
			if slices.Contains(egressOf(np), "*") {
				return false
			}
		}
		return true
	})
	wantEgress("with the cloudlet's trust policy", rules...)

	// Deleting one instance removes its policy only.
	p, err = ccrmtest.Wait(r.AppInst.DeleteAppInst(ctx, &edgeproto.DeleteAppInstRequest{Key: w2}))
	r.want(t, "delete instance w2", p, err, edgeproto.TrackedState_TRACKED_STATE_DELETE_DONE)
	settled("the exception on w1 only after the delete of w2", "w1")

	// The pool changes: off the cloudlet, and back.
	setPool()
	settled("the exception removed with the cloudlet out of the pool")
	setPool(r.cloudlet.Name)
	settled("the exception applied again with the cloudlet back in the pool", "w1")

	// Rejected, approved again.
	setState(edgeproto.TrustPolicyExceptionState_TRUST_POLICY_EXCEPTION_STATE_REJECTED)
	settled("the rejected exception removed")
	setState(edgeproto.TrustPolicyExceptionState_TRUST_POLICY_EXCEPTION_STATE_ACTIVE)
	settled("the exception approved again", "w1")
	wantEgress("approved again", rules...)

	// New rules: one NetworkPolicies cannot express fails on the entry
	// with the platform's reason, and the policy keeps the rules it had;
	// rules it can express are applied.
	setRules := func(rs ...*edgeproto.SecurityRule) {
		t.Helper()
		if _, err := tpes.UpdateTrustPolicyException(ctx, &edgeproto.UpdateTrustPolicyExceptionRequest{
			TrustPolicyException: &edgeproto.TrustPolicyException{Key: excKey, OutboundSecurityRules: rs},
			Fields:               []string{edgeproto.TrustPolicyExceptionFieldOutboundSecurityRules}}); err != nil {
			t.Fatal(err)
		}
	}
	setRules(&edgeproto.SecurityRule{Protocol: "icmp", RemoteCidr: "10.3.0.0/16"})
	var failed *edgeproto.TrustPolicyExceptionInstance
	controllertest.WaitFor(t, 60*time.Second, "the entry of w1 in UPDATE_ERROR", func() bool {
		ins := stored().GetInstances()
		if len(ins) == 1 && ins[0].GetState() == edgeproto.TrackedState_TRACKED_STATE_UPDATE_ERROR {
			failed = ins[0]
		}
		return failed != nil
	})
	if errs := failed.GetErrors(); len(errs) != 1 || !strings.Contains(errs[0], `protocol "icmp"`) {
		t.Errorf("errors of the entry with an icmp rule = %q, want the platform's reason (protocol \"icmp\")", errs)
	}
	wantEgress("after rules it cannot apply", rules...)
	setRules(&edgeproto.SecurityRule{Protocol: "tcp", PortRangeMin: 6432, PortRangeMax: 6432, RemoteCidr: "10.3.0.0/16"})
	settled("the new rules applied", "w1")
	wantEgress("with new rules", "dns", "TCP 6432 10.3.0.0/16")

	// Deleted: its policies go, then the exception leaves the store.
	if _, err := tpes.DeleteTrustPolicyException(ctx, &edgeproto.DeleteTrustPolicyExceptionRequest{Key: excKey}); err != nil {
		t.Fatal(err)
	}
	controllertest.WaitFor(t, 60*time.Second, "the exception deleted everywhere", func() bool {
		return stored() == nil && len(policies()) == 0
	})
}
