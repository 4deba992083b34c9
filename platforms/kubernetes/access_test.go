package kubernetes

import (
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/edgekit/edgekit/edgeproto"
)

// TestAccessTypeServices: the App's access type picks the Service's type
// (direct: NodePort, load balancer: LoadBalancer, internal: ClusterIP),
// and the runtime reports where the instance is reached: the cluster IP
// and port, the node ports, and a load balancer's ingress once the
// cluster's load balancer controller (played by the test) reports one.
func TestAccessTypeServices(t *testing.T) {
	env := testEnv(t)
	cs := admin(t, env)
	ctx := testCtx(t)
	p := newPlatform(t)
	cl := testCloudlet("access", env.AdminKubeconfig())
	ci := testCluster(cl, "access")
	if err := p.CreateCluster(ctx, cl, ci, nil, &steps{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.DeleteCluster(testCtx(t), cl, ci, nil, &steps{}) })
	app := testApp()
	app.Ports = append(app.Ports, &edgeproto.Port{Proto: edgeproto.PortProtocol_PORT_PROTOCOL_UDP, InternalPort: 9000})
	app.AccessType = edgeproto.AccessType_ACCESS_TYPE_DIRECT
	inst := testInst(ci, app, "reached")
	r := refsOf(ci, inst)
	svc := func() *corev1.Service {
		t.Helper()
		s, err := cs.CoreV1().Services(r.ns).Get(ctx, r.name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	type ep struct {
		kind, host string
		port       int32
		proto      string
		target     int32
	}
	eps := func(rt *edgeproto.AppInstRuntime) []ep {
		var out []ep
		for _, e := range rt.GetEndpoints() {
			out = append(out, ep{e.GetKind(), e.GetHost(), e.GetPort(), e.GetProtocol(), e.GetTargetPort()})
		}
		return out
	}

	rt, err := p.CreateAppInst(ctx, ci, app, inst, nil, &steps{})
	if err != nil {
		t.Fatal(err)
	}
	s := svc()
	if s.Spec.Type != corev1.ServiceTypeNodePort || len(s.Spec.Ports) != 2 || s.Spec.Ports[0].NodePort == 0 || s.Spec.Ports[1].NodePort == 0 {
		t.Fatalf("direct access: service %s with ports %+v, want NodePort with node ports", s.Spec.Type, s.Spec.Ports)
	}
	want := []ep{
		{EndpointClusterIP, s.Spec.ClusterIP, 8080, "tcp", 8080},
		{EndpointClusterDNS, s.Name + "." + r.ns + ".svc.cluster.local", 8080, "tcp", 8080},
		{EndpointNodePort, "", s.Spec.Ports[0].NodePort, "tcp", 8080},
		{EndpointClusterIP, s.Spec.ClusterIP, 9000, "udp", 9000},
		{EndpointClusterDNS, s.Name + "." + r.ns + ".svc.cluster.local", 9000, "udp", 9000},
		{EndpointNodePort, "", s.Spec.Ports[1].NodePort, "udp", 9000},
	}
	if got := eps(rt); !slices.Equal(got, want) || s.Spec.ClusterIP == "" || !slices.Equal(rt.GetPorts(), []uint32{8080, 9000}) {
		t.Errorf("direct access: endpoints %+v ports %v, want %+v and 8080, 9000", got, rt.GetPorts(), want)
	}

	// A load balancer: its ingress is reported once the cluster has one.
	app.AccessType = edgeproto.AccessType_ACCESS_TYPE_LOAD_BALANCER
	if rt, err = p.UpdateAppInst(ctx, ci, app, inst, nil, &steps{}); err != nil {
		t.Fatal(err)
	}
	s = svc()
	if s.Spec.Type != corev1.ServiceTypeLoadBalancer {
		t.Fatalf("load balancer access: service type %s", s.Spec.Type)
	}
	for _, e := range eps(rt) {
		if e.kind == EndpointLoadBalancer {
			t.Errorf("a load balancer endpoint %+v before the cluster reported an ingress", e)
		}
	}
	s.Status.LoadBalancer.Ingress = []corev1.LoadBalancerIngress{{IP: "203.0.113.7"}}
	if _, err := cs.CoreV1().Services(r.ns).UpdateStatus(ctx, s, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if rt, err = p.UpdateAppInst(ctx, ci, app, inst, nil, &steps{}); err != nil {
		t.Fatal(err)
	}
	s = svc()
	want = []ep{
		{EndpointClusterIP, s.Spec.ClusterIP, 8080, "tcp", 8080},
		{EndpointClusterDNS, s.Name + "." + r.ns + ".svc.cluster.local", 8080, "tcp", 8080},
		{EndpointNodePort, "", s.Spec.Ports[0].NodePort, "tcp", 8080},
		{EndpointLoadBalancer, "203.0.113.7", 8080, "tcp", 8080},
		{EndpointClusterIP, s.Spec.ClusterIP, 9000, "udp", 9000},
		{EndpointClusterDNS, s.Name + "." + r.ns + ".svc.cluster.local", 9000, "udp", 9000},
		{EndpointNodePort, "", s.Spec.Ports[1].NodePort, "udp", 9000},
		{EndpointLoadBalancer, "203.0.113.7", 9000, "udp", 9000},
	}
	if got := eps(rt); !slices.Equal(got, want) {
		t.Errorf("load balancer access: endpoints %+v, want %+v", got, want)
	}

	// Internal: back to a ClusterIP, no node ports.
	app.AccessType = edgeproto.AccessType_ACCESS_TYPE_INTERNAL
	if rt, err = p.UpdateAppInst(ctx, ci, app, inst, nil, &steps{}); err != nil {
		t.Fatal(err)
	}
	s = svc()
	want = []ep{
		{EndpointClusterIP, s.Spec.ClusterIP, 8080, "tcp", 8080},
		{EndpointClusterDNS, s.Name + "." + r.ns + ".svc.cluster.local", 8080, "tcp", 8080},
		{EndpointClusterIP, s.Spec.ClusterIP, 9000, "udp", 9000},
		{EndpointClusterDNS, s.Name + "." + r.ns + ".svc.cluster.local", 9000, "udp", 9000},
	}
	if got := eps(rt); s.Spec.Type != corev1.ServiceTypeClusterIP || !slices.Equal(got, want) {
		t.Errorf("internal access: service %s, endpoints %+v, want ClusterIP and %+v", s.Spec.Type, got, want)
	}
	if err := p.DeleteAppInst(ctx, ci, app, inst, nil, &steps{}); err != nil {
		t.Fatal(err)
	}
}
