package kubernetes

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/executor"
)

// maxServicePorts bounds the ports a port range expands to.
const maxServicePorts = 100

// configMountPath is where an App's configs are mounted, one file each.
const configMountPath = "/etc/edgekit/config"

// appRefs names what an instance owns.
type appRefs struct {
	ns, name string
	labels   map[string]string
	sel      string // label selector of everything of the instance
}

func refsOf(cluster *edgeproto.ClusterInst, inst *edgeproto.AppInst) appRefs {
	clk := cluster.GetCloudletKey()
	if clk == nil {
		clk = inst.GetCloudletKey()
	}
	ck := cluster.GetKey()
	if ck == nil {
		ck = inst.GetClusterKey()
	}
	r := appRefs{
		ns:     namespaceName(clk, ck),
		name:   appName(clk, ck, inst.GetKey()),
		labels: appLabels(clk, ck, inst.GetKey()),
	}
	r.sel = LabelManagedBy + "=" + managedBy + "," + LabelAppInst + "=" + r.labels[LabelAppInst]
	return r
}

func (r appRefs) annotations(cluster *edgeproto.ClusterInst, app *edgeproto.App, inst *edgeproto.AppInst) map[string]string {
	clk := cluster.GetCloudletKey()
	if clk == nil {
		clk = inst.GetCloudletKey()
	}
	a := clusterAnnotations(clk, cluster.GetKey())
	a[AnnAppInstKey] = keyJSON(inst.GetKey())
	a[AnnAppKey] = keyJSON(app.GetKey())
	return a
}

func (p *Platform) clusterConn(cluster *edgeproto.ClusterInst, inst *edgeproto.AppInst) (*conn, error) {
	k := cluster.GetCloudletKey()
	if k == nil {
		k = inst.GetCloudletKey()
	}
	return p.connByKey(k)
}

// CreateAppInst deploys the App into the cluster's namespace (or adopts
// what is there) and waits until its pods are ready.
func (p *Platform) CreateAppInst(ctx context.Context, cluster *edgeproto.ClusterInst, app *edgeproto.App, inst *edgeproto.AppInst, _ executor.Reservations, pr executor.Progress) (*edgeproto.AppInstRuntime, error) {
	return p.deployApp(ctx, cluster, app, inst, pr, false)
}

// UpdateAppInst rolls the Deployment out to the App as it is now, or
// applies the power state asked for: off scales to 0 and remembers the
// replicas, on restores them, reboot restarts the pods. An instance never
// created fails with an error matching executor.ErrNotFound.
func (p *Platform) UpdateAppInst(ctx context.Context, cluster *edgeproto.ClusterInst, app *edgeproto.App, inst *edgeproto.AppInst, _ executor.Reservations, pr executor.Progress) (*edgeproto.AppInstRuntime, error) {
	return p.deployApp(ctx, cluster, app, inst, pr, true)
}

func (p *Platform) deployApp(ctx context.Context, cluster *edgeproto.ClusterInst, app *edgeproto.App, inst *edgeproto.AppInst, pr executor.Progress, update bool) (*edgeproto.AppInstRuntime, error) {
	if err := validateApp(app); err != nil {
		return nil, err
	}
	if err := executor.ValidateKeys(inst); err != nil {
		return nil, err
	}
	c, err := p.clusterConn(cluster, inst)
	if err != nil {
		return nil, err
	}
	r := refsOf(cluster, inst)
	what := "app instance " + executor.KeyString(inst)
	manifest := app.GetDeploymentManifest() != ""
	res, err := flavorResources(app, inst)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	if update && !manifest {
		_, err := c.cs.AppsV1().Deployments(r.ns).Get(ctx, r.name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil, fmt.Errorf("%s: deployment %s/%s: %w", what, r.ns, r.name, executor.ErrNotFound)
		}
		if err != nil {
			return nil, apiErr(ctx, "reading", gvrDeployment, r.ns, r.name, err)
		}
	} else if !update {
		ns, err := c.cs.CoreV1().Namespaces().Get(ctx, r.ns, metav1.GetOptions{})
		if apierrors.IsNotFound(err) || (err == nil && ns.DeletionTimestamp != nil) {
			return nil, fmt.Errorf("%s: namespace %s of cluster %s: %w", what, r.ns, executor.KeyString(inst.GetClusterKey()), executor.ErrClusterNotReady)
		}
		if err != nil {
			return nil, apiErr(ctx, "reading", gvrNamespace, "", r.ns, err)
		}
	}
	ann := r.annotations(cluster, app, inst)
	if manifest {
		return p.deployManifest(ctx, c, r, ann, app, inst, pr, update)
	}
	meta := func(string) metav1.ObjectMeta {
		return metav1.ObjectMeta{Labels: mergeLabels(r.labels, map[string]string{LabelKind: kindApp}), Annotations: ann}
	}
	// Secret environment: a Secret, referenced by name and key.
	secretName, configName := r.name+"-env", r.name+"-config"
	secretData := map[string][]byte{}
	for _, v := range app.GetEnvVars() {
		if v.GetSecret() {
			secretData[v.GetName()] = []byte(v.GetSecretValue())
		}
	}
	if len(secretData) > 0 {
		step(pr, "Creating secret")
		if _, err := apply(ctx, c, gvrSecret, r.ns, secretName, fixed(&corev1.Secret{
			TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"}, ObjectMeta: meta(""),
			Type: corev1.SecretTypeOpaque, Data: secretData,
		})); err != nil {
			return nil, fmt.Errorf("%s: %w", what, err)
		}
	} else if err := deleteFenced(ctx, c, gvrSecret, r.ns, secretName); err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	if len(app.GetConfigs()) > 0 {
		step(pr, "Creating config map")
		data := map[string]string{}
		for i, cf := range app.GetConfigs() {
			data[configKey(i, cf)] = cf.GetConfig()
		}
		if _, err := apply(ctx, c, gvrConfigMap, r.ns, configName, fixed(&corev1.ConfigMap{
			TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"}, ObjectMeta: meta(""), Data: data,
		})); err != nil {
			return nil, fmt.Errorf("%s: %w", what, err)
		}
	} else if err := deleteFenced(ctx, c, gvrConfigMap, r.ns, configName); err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}

	step(pr, "Creating deployment")
	wanted := wantedReplicas(app, inst)
	inputs := inputsHash(secretData, app.GetConfigs())
	deadline := p.progressDeadline(ctx)
	var replicas int32
	depBuild := func(ready, reboot bool) build {
		return func(cur *unstructured.Unstructured) (runtime.Object, error) {
			if ready && cur == nil {
				return nil, fmt.Errorf("deployment %s/%s vanished: %w", r.ns, r.name, executor.ErrNotFound)
			}
			d := deployment(r, meta(""), app, res, secretName, configName)
			d.Spec.ProgressDeadlineSeconds = deadline
			state := stateCreating
			if update || ready {
				state = stateReady
			}
			var restartedAt string
			if cur != nil {
				if cur.GetAnnotations()[AnnState] == stateReady {
					state = stateReady
				}
				restartedAt, _, _ = unstructured.NestedString(cur.Object, "spec", "template", "metadata", "annotations", AnnRestartedAt)
			}
			d.Annotations = mergeLabels(d.Annotations, map[string]string{AnnState: state})
			replicas = powerReplicas(cur, inst.GetPowerState(), wanted, d.Annotations)
			d.Spec.Replicas = &replicas
			if reboot {
				restartedAt = time.Now().UTC().Format(time.RFC3339Nano)
			}
			ta := map[string]string{}
			if restartedAt != "" {
				ta[AnnRestartedAt] = restartedAt
			}
			if inputs != "" {
				ta[AnnInputsHash] = inputs
			}
			if len(ta) > 0 {
				d.Spec.Template.Annotations = ta
			}
			return d, nil
		}
	}
	reboot := update && inst.GetPowerState() == edgeproto.PowerState_POWER_STATE_REBOOT_REQUESTED
	dep, err := apply(ctx, c, gvrDeployment, r.ns, r.name, depBuild(false, reboot))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}

	ports, err := servicePorts(app.GetPorts())
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	if len(ports) > 0 {
		step(pr, "Creating service")
		svcType := serviceType(app)
		if _, err := apply(ctx, c, gvrService, r.ns, r.name, fixed(&corev1.Service{
			TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Service"}, ObjectMeta: meta(""),
			Spec: corev1.ServiceSpec{Type: svcType, Selector: map[string]string{LabelAppInst: r.labels[LabelAppInst]}, Ports: ports},
		})); err != nil {
			return nil, fmt.Errorf("%s: %w", what, err)
		}
	} else if err := deleteFenced(ctx, c, gvrService, r.ns, r.name); err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}

	pods, err := waitRollout(ctx, c, r, dep.GetGeneration(), replicas, pr)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	if dep.GetAnnotations()[AnnState] != stateReady {
		if _, err := apply(ctx, c, gvrDeployment, r.ns, r.name, depBuild(true, false)); err != nil {
			return nil, fmt.Errorf("%s: %w", what, err)
		}
	}
	rt := &edgeproto.AppInstRuntime{ContainerIds: containerIDs(pods)}
	if err := addServices(ctx, c, r, rt); err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	return rt, nil
}

// serviceType is the type of the Service of an App's ports from its
// access type: ClusterIP for internal, NodePort for direct, LoadBalancer
// for a load balancer; unset, ClusterIP unless a port asks for a public
// port (LoadBalancer).
func serviceType(app *edgeproto.App) corev1.ServiceType {
	switch app.GetAccessType() {
	case edgeproto.AccessType_ACCESS_TYPE_INTERNAL:
		return corev1.ServiceTypeClusterIP
	case edgeproto.AccessType_ACCESS_TYPE_DIRECT:
		return corev1.ServiceTypeNodePort
	case edgeproto.AccessType_ACCESS_TYPE_LOAD_BALANCER:
		return corev1.ServiceTypeLoadBalancer
	}
	for _, pt := range app.GetPorts() {
		if pt.GetPublicPort() != 0 {
			return corev1.ServiceTypeLoadBalancer
		}
	}
	return corev1.ServiceTypeClusterIP
}

// Kinds of ServiceEndpoint.
const (
	EndpointClusterIP    = "cluster_ip"
	EndpointNodePort     = "node_port"
	EndpointLoadBalancer = "load_balancer"
	// EndpointClusterDNS is the Service's name in the cluster's DNS,
	// "<service>.<namespace>.svc.<ClusterDomain>", reached from the
	// cluster's pods.
	EndpointClusterDNS = "cluster_dns"
)

// ClusterDomain is the DNS domain of the cluster's Services (the
// Kubernetes default, which the FLUIDOS reference assumes too).
const ClusterDomain = "cluster.local"

// addServices adds to rt the ports of the instance's Services and where
// they are reached: the cluster IP and port, the Service's cluster DNS
// name and port, the node port (on every
// node's address), each load balancer ingress (as the cluster's load
// balancer controller reports it, when there is one).
func addServices(ctx context.Context, c *conn, r appRefs, rt *edgeproto.AppInstRuntime) error {
	l, err := c.cs.CoreV1().Services(r.ns).List(ctx, metav1.ListOptions{LabelSelector: r.sel})
	if err != nil {
		return apiErr(ctx, "listing", gvrService, r.ns, r.sel, err)
	}
	sort.Slice(l.Items, func(i, j int) bool { return l.Items[i].Name < l.Items[j].Name })
	seen := map[uint32]bool{}
	for i := range l.Items {
		svc := &l.Items[i]
		for _, sp := range svc.Spec.Ports {
			if !seen[uint32(sp.Port)] {
				seen[uint32(sp.Port)] = true
				rt.Ports = append(rt.Ports, uint32(sp.Port))
			}
		}
		rt.Endpoints = append(rt.Endpoints, serviceEndpoints(svc)...)
	}
	return nil
}

// serviceEndpoints are where svc's ports are reached.
func serviceEndpoints(svc *corev1.Service) []*edgeproto.ServiceEndpoint {
	var out []*edgeproto.ServiceEndpoint
	for _, sp := range svc.Spec.Ports {
		proto := strings.ToLower(string(sp.Protocol))
		if proto == "" {
			proto = "tcp"
		}
		target := int32(sp.TargetPort.IntValue())
		if target == 0 && sp.TargetPort.Type == intstr.Int {
			target = sp.Port
		}
		ep := func(kind, host string, port int32) *edgeproto.ServiceEndpoint {
			return &edgeproto.ServiceEndpoint{Kind: kind, Host: host, Port: port, Protocol: proto, TargetPort: target}
		}
		if ip := svc.Spec.ClusterIP; ip != "" && ip != corev1.ClusterIPNone {
			out = append(out, ep(EndpointClusterIP, ip, sp.Port))
		}
		out = append(out, ep(EndpointClusterDNS, svc.Name+"."+svc.Namespace+".svc."+ClusterDomain, sp.Port))
		if sp.NodePort != 0 {
			out = append(out, ep(EndpointNodePort, "", sp.NodePort))
		}
		for _, in := range svc.Status.LoadBalancer.Ingress {
			host := in.IP
			if host == "" {
				host = in.Hostname
			}
			if host != "" {
				out = append(out, ep(EndpointLoadBalancer, host, sp.Port))
			}
		}
	}
	return out
}

// inputsHash is a digest of what the pods read from the Secret and the
// ConfigMap (the secret environment and the configs), empty when there is
// neither. On the pod template it makes a change of either a rollout (pods
// read them when they start); it is a SHA-256 over all of them together,
// never a value.
func inputsHash(secretData map[string][]byte, configs []*edgeproto.ConfigFile) string {
	if len(secretData) == 0 && len(configs) == 0 {
		return ""
	}
	h := sha256.New()
	names := make([]string, 0, len(secretData))
	for k := range secretData {
		names = append(names, k)
	}
	sort.Strings(names)
	field := func(b []byte) {
		var n [8]byte
		binary.BigEndian.PutUint64(n[:], uint64(len(b)))
		h.Write(n[:])
		h.Write(b)
	}
	field([]byte("env"))
	for _, k := range names {
		field([]byte(k))
		field(secretData[k])
	}
	field([]byte("configs"))
	for i, cf := range configs {
		field([]byte(configKey(i, cf)))
		field([]byte(cf.GetConfig()))
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}

// progressDeadline is the Deployment's progressDeadlineSeconds: the
// configured ProgressDeadline, else nine tenths of the time left to the
// operation (at least 10 s) so that a stuck rollout ends the wait with
// the Deployment's ProgressDeadlineExceeded condition before the operation
// times out, else nil (Kubernetes' default, 600 s).
func (p *Platform) progressDeadline(ctx context.Context) *int32 {
	d := p.cfg.ProgressDeadline
	if d <= 0 {
		dl, ok := ctx.Deadline()
		if !ok {
			return nil
		}
		d = time.Until(dl) * 9 / 10
	}
	secs := int64(d / time.Second)
	secs = max(secs, 10)
	secs = min(secs, 1<<30)
	n := int32(secs)
	return &n
}

func validateApp(app *edgeproto.App) error {
	name := executor.KeyString(app.GetKey())
	switch d := app.GetDeployment(); d {
	case "", "kubernetes", "docker":
	default:
		return fmt.Errorf("%w: app %s: deployment %q (the kubernetes platform runs kubernetes and docker apps)", executor.ErrUnsupported, name, d)
	}
	if app.GetDeploymentManifest() != "" {
		return nil // checked against the cluster when it is applied
	}
	if strings.TrimSpace(app.GetImagePath()) == "" {
		return fmt.Errorf("%w: app %s has no image_path (and no deployment_manifest)", executor.ErrBadObject, name)
	}
	for _, v := range app.GetEnvVars() {
		if v.GetName() == "" || strings.ContainsAny(v.GetName(), "=\x00") {
			return fmt.Errorf("%w: app %s: environment variable name %.64q", executor.ErrBadObject, name, v.GetName())
		}
	}
	return executor.ValidatePorts(app.GetPorts())
}

// flavorResources are the requests and limits of the instance's flavor
// (the App's default flavor when the instance names none).
func flavorResources(app *edgeproto.App, inst *edgeproto.AppInst) (corev1.ResourceRequirements, error) {
	f := inst.GetFlavor()
	if f == "" {
		f = app.GetDefaultFlavor()
	}
	sz, err := parseFlavor(f)
	if err != nil {
		return corev1.ResourceRequirements{}, err
	}
	if sz.empty() {
		return corev1.ResourceRequirements{}, nil // the LimitRange's defaults
	}
	l := sz.list()
	if sz.gpus > 0 {
		l["nvidia.com/gpu"] = *resource.NewQuantity(sz.gpus, resource.DecimalSI)
	}
	return corev1.ResourceRequirements{Requests: l, Limits: l.DeepCopy()}, nil
}

// wantedReplicas is the instance's or the App's replicas annotation, 1 by
// default.
func wantedReplicas(app *edgeproto.App, inst *edgeproto.AppInst) int32 {
	for _, a := range []map[string]string{inst.GetAnnotations(), app.GetAnnotations()} {
		if v, ok := a[AnnReplicasWanted]; ok {
			if n, err := strconv.ParseInt(v, 10, 32); err == nil && n >= 0 {
				return int32(n)
			}
		}
	}
	return 1
}

// powerReplicas decides the replicas to write: off remembers the current
// replicas in AnnReplicas (set into ann) and asks for 0; on restores them;
// any other update of a powered-off Deployment keeps it off.
func powerReplicas(cur *unstructured.Unstructured, ps edgeproto.PowerState, wanted int32, ann map[string]string) int32 {
	var remembered string
	var curReplicas int64 = -1
	if cur != nil {
		remembered = cur.GetAnnotations()[AnnReplicas]
		if n, ok, _ := unstructured.NestedInt64(cur.Object, "spec", "replicas"); ok {
			curReplicas = n
		}
	}
	switch ps {
	case edgeproto.PowerState_POWER_STATE_POWER_OFF_REQUESTED, edgeproto.PowerState_POWER_STATE_POWERING_OFF, edgeproto.PowerState_POWER_STATE_POWER_OFF:
		if remembered == "" {
			remembered = strconv.Itoa(int(wanted))
			if curReplicas > 0 {
				remembered = strconv.FormatInt(curReplicas, 10)
			}
		}
		ann[AnnReplicas] = remembered
		return 0
	case edgeproto.PowerState_POWER_STATE_POWER_ON_REQUESTED, edgeproto.PowerState_POWER_STATE_POWERING_ON:
		if n, err := strconv.ParseInt(remembered, 10, 32); err == nil && n >= 0 {
			return int32(n)
		}
		return wanted
	}
	if remembered != "" {
		ann[AnnReplicas] = remembered
		return 0
	}
	return wanted
}

func configKey(i int, cf *edgeproto.ConfigFile) string {
	k := slug(cf.GetKind(), 40)
	if k == "" {
		k = "config"
	}
	return fmt.Sprintf("%d-%s", i, k)
}

// deployment builds the instance's Deployment.
func deployment(r appRefs, meta metav1.ObjectMeta, app *edgeproto.App, res corev1.ResourceRequirements, secretName, configName string) *appsv1.Deployment {
	ctr := corev1.Container{
		Name:      "app",
		Image:     strings.TrimSpace(app.GetImagePath()),
		Resources: res,
	}
	if cmd := strings.TrimSpace(app.GetCommand()); cmd != "" {
		if len(app.GetArgs()) == 0 && strings.ContainsAny(cmd, " \t") {
			f := strings.Fields(cmd)
			ctr.Command, ctr.Args = f[:1], f[1:]
		} else {
			ctr.Command, ctr.Args = []string{cmd}, app.GetArgs()
		}
	} else if len(app.GetArgs()) > 0 {
		ctr.Args = app.GetArgs()
	}
	for _, v := range app.GetEnvVars() {
		if v.GetSecret() {
			ctr.Env = append(ctr.Env, corev1.EnvVar{Name: v.GetName(), ValueFrom: &corev1.EnvVarSource{
				SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: secretName}, Key: v.GetName()},
			}})
		} else {
			ctr.Env = append(ctr.Env, corev1.EnvVar{Name: v.GetName(), Value: v.GetValue()})
		}
	}
	for _, pt := range app.GetPorts() {
		proto := corev1.ProtocolTCP
		if pt.GetProto() == edgeproto.PortProtocol_PORT_PROTOCOL_UDP {
			proto = corev1.ProtocolUDP
		}
		if pt.GetEndPort() == 0 || pt.GetEndPort() == pt.GetInternalPort() {
			ctr.Ports = append(ctr.Ports, corev1.ContainerPort{ContainerPort: pt.GetInternalPort(), Protocol: proto})
		}
	}
	var vols []corev1.Volume
	if len(app.GetConfigs()) > 0 {
		vols = append(vols, corev1.Volume{Name: "config", VolumeSource: corev1.VolumeSource{
			ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: configName}},
		}})
		ctr.VolumeMounts = append(ctr.VolumeMounts, corev1.VolumeMount{Name: "config", MountPath: configMountPath, ReadOnly: true})
	}
	ctr.ReadinessProbe = readiness(app)
	sel := map[string]string{LabelAppInst: r.labels[LabelAppInst]}
	return &appsv1.Deployment{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
		ObjectMeta: meta,
		Spec: appsv1.DeploymentSpec{
			Selector: &metav1.LabelSelector{MatchLabels: sel},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: mergeLabels(r.labels, map[string]string{LabelKind: kindApp})},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{ctr}, Volumes: vols},
			},
		},
	}
}

// readiness turns the App's health check into a readiness probe on its
// first TCP port.
func readiness(app *edgeproto.App) *corev1.Probe {
	var port int32
	for _, pt := range app.GetPorts() {
		if pt.GetProto() != edgeproto.PortProtocol_PORT_PROTOCOL_UDP {
			port = pt.GetInternalPort()
			break
		}
	}
	if port == 0 {
		return nil
	}
	target := intstr.FromInt32(port)
	switch app.GetHealthCheck() {
	case edgeproto.HealthCheck_HEALTH_CHECK_HTTP:
		path := app.GetHealthCheckPath()
		if path == "" {
			path = "/"
		}
		return &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: path, Port: target}}, PeriodSeconds: 5}
	case edgeproto.HealthCheck_HEALTH_CHECK_TCP:
		return &corev1.Probe{ProbeHandler: corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: target}}, PeriodSeconds: 5}
	}
	return nil
}

// servicePorts are the Service's ports: one per port of the App, a range
// expanded (at most maxServicePorts in all).
func servicePorts(ports []*edgeproto.Port) ([]corev1.ServicePort, error) {
	var out []corev1.ServicePort
	for _, pt := range ports {
		proto := corev1.ProtocolTCP
		ps := "tcp"
		if pt.GetProto() == edgeproto.PortProtocol_PORT_PROTOCOL_UDP {
			proto, ps = corev1.ProtocolUDP, "udp"
		}
		end := pt.GetEndPort()
		if end < pt.GetInternalPort() {
			end = pt.GetInternalPort()
		}
		for port := pt.GetInternalPort(); port <= end; port++ {
			if len(out) == maxServicePorts {
				return nil, fmt.Errorf("%w: more than %d ports", executor.ErrBadObject, maxServicePorts)
			}
			out = append(out, corev1.ServicePort{Name: fmt.Sprintf("%s-%d", ps, port), Protocol: proto, Port: port, TargetPort: intstr.FromInt32(port)})
		}
	}
	return out, nil
}

// manifestResources are the resources an instance may have written: those
// its manifest record lists, those the App's manifest names (when the
// cluster resolves them), then appResources.
func manifestResources(ctx context.Context, c *conn, r appRefs, app *edgeproto.App) ([]schema.GroupVersionResource, error) {
	rec, _, err := recordedResources(ctx, c, r)
	if err != nil {
		return nil, err
	}
	if app.GetDeploymentManifest() != "" {
		if objs, err := manifestObjects(c, app, r.ns); err == nil {
			for _, o := range objs {
				rec = append(rec, o.gvr)
			}
		}
	}
	seen := map[schema.GroupVersionResource]bool{}
	for _, g := range appResources {
		seen[g] = true
	}
	var out []schema.GroupVersionResource
	for _, g := range rec {
		if !seen[g] {
			seen[g] = true
			out = append(out, g)
		}
	}
	return append(out, appResources...), nil
}

// DeleteAppInst deletes everything labelled with the instance (foreground)
// and waits until it is gone; what is absent is deleted already.
func (p *Platform) DeleteAppInst(ctx context.Context, cluster *edgeproto.ClusterInst, app *edgeproto.App, inst *edgeproto.AppInst, _ executor.Reservations, pr executor.Progress) error {
	c, err := p.clusterConn(cluster, inst)
	if err != nil {
		return err
	}
	r := refsOf(cluster, inst)
	what := "app instance " + executor.KeyString(inst)
	// What a manifest wrote (its record lists every resource written;
	// the App's manifest as it is now adds what it names), then what an
	// image App owns (the record, a ConfigMap, last).
	res, err := manifestResources(ctx, c, r, app)
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	step(pr, "Deleting deployment and service")
	for _, gvr := range res {
		if err := deleteLabelled(ctx, c, gvr, r.ns, r.sel); err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
	}
	step(pr, "Waiting for pods to be gone")
	for _, gvr := range append(res, gvrPod) {
		if err := waitNone(ctx, c, gvr, r.ns, r.sel, ""); err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
	}
	return nil
}
