// Package kubernetes is the platform of a cloudlet that is one Kubernetes
// cluster, driven with client-go. It registers itself as "kubernetes" with
// the platforms registry.
//
// Access: the cloudlet's access variable KUBECONFIG holds a kubeconfig
// (its content). A call uses the kubeconfig the cloudlet it is given
// carries; a call given none (the AppInst calls, the delete of what a
// cloudlet the host no longer has had) uses the clients an earlier call
// built for the cloudlet (a CRM's platform, built before it knows the
// cloudlet, learns the kubeconfig so), else Config.Kubeconfig (which
// platforms.Config.AccessVars fills: the CCRM builds a cloudlet's
// platform from the cloudlet), else the in-cluster configuration of a
// host running in a pod. InitCloudlet, which the engine runs again
// whenever the cloudlet changes, takes the cloudlet as the truth: clients
// built from a kubeconfig it no longer carries (replaced or removed) are
// never used again, and when none can be built from what it carries the
// calls given no kubeconfig fail with the same error. The kubeconfig is a
// secret: it is never logged, and an unusable one fails naming the
// variable, never quoting it.
//
// What each object is:
//
//   - Cloudlet: the cluster. InitCloudlet checks that the API server
//     answers and, with one SelfSubjectAccessReview per verb and resource
//     (Permissions), that the credentials may do what the platform does;
//     the error names every missing permission (ErrForbidden). The
//     ClusterRole in docs/kubernetes-clusterrole.yaml grants exactly
//     these. GatherCloudletInfo reports the schedulable nodes (allocatable
//     and capacity, GPUs from extended resources such as nvidia.com/gpu),
//     one flavor per node shape named k8s.node.<vcpus>c.<ram MB>m[.<gpus>g]
//     (a name the platform resolves without state), and a snapshot: pod
//     requests against the nodes' allocatable vCPUs, RAM, pods and GPUs,
//     the cloudlet's resource quotas, and its clusters. CleanupCloudlet
//     deletes nothing.
//   - ClusterInst: a namespace (multi-tenant model) with a ResourceQuota
//     from its node pools (or one node of its flavor; a pool's optional
//     resources cpu, memory, pods, gpu and storage, Kubernetes quantities,
//     set the quota exactly, pods and requests.storage included), a
//     LimitRange giving
//     containers default requests and limits, a NetworkPolicy admitting
//     ingress only from the namespace's own pods, and the cloudlet's trust
//     policy; it waits until the namespace's default ServiceAccount exists
//     and its quota's usage is computed (until then pods are refused). A
//     cluster that does not fit in the cloudlet's resource quotas (vCPUs,
//     RAM) beside the quotas of its other namespaces fails with
//     executor.ErrInsufficientResources naming the resource (two creates
//     at once may both pass). Delete removes the namespace and waits until
//     it is gone.
//   - Credentials of a cluster's tenant (executor.ClusterCredentialsPlatform):
//     IssueClusterCredentials enforces the baseline Pod Security Standard
//     on the cluster's namespace, makes a ServiceAccount, a Role of
//     TenantRules (workloads in the namespace, nothing else) and a
//     RoleBinding there, and returns a kubeconfig of
//     the cloudlet's API server and authority with a TokenRequest token
//     of the ServiceAccount lasting until the time asked (ten minutes at
//     least); RevokeClusterCredentials deletes the three, after which the
//     API server refuses every token of the ServiceAccount.
//   - AppInst of an App with deployment "kubernetes" (or "docker"): a
//     Deployment of image_path with the App's command and args, its plain
//     environment in the spec and its secret environment in a Secret read
//     through secretKeyRef (never in the Deployment), its configs in a
//     ConfigMap mounted at /etc/edgekit/config, requests and limits from
//     the instance's flavor (else the App's default flavor, else the
//     LimitRange defaults), a readiness probe from the App's health check,
//     and a Service for its ports after the App's access type (internal:
//     ClusterIP, direct: NodePort, load balancer: LoadBalancer; unset:
//     ClusterIP, LoadBalancer when a port asks for a public port). The
//     pod template carries edgekit.io/inputs-hash, a SHA-256 of the secret
//     environment and the configs (never a value), so that changing them
//     rolls the pods. The annotation kubernetes.edgekit.io/replicas of
//     the instance or the App sets the replicas (1 by default). Create and
//     update wait, by watching the Deployment, its ReplicaSets and its
//     pods, until the current template's pods are all ready, reporting
//     "Waiting for n/m pods ready"; a pod of the current template that
//     cannot run ends the wait with the cluster's reason (ErrPodFailed:
//     FailedScheduling with the scheduler's message, ImagePullBackOff,
//     CrashLoopBackOff...), and a Deployment condition saying the rollout
//     is stuck ends it with ErrRollout. The Deployment's
//     progressDeadlineSeconds is Config.ProgressDeadline, else nine tenths
//     of the time the operation has left, so a rollout that makes no
//     progress ends with ProgressDeadlineExceeded rather than a timeout.
//     Update is a rollout; power off scales to 0 and remembers the
//     replicas in an annotation, power on restores them, reboot restarts
//     the pods. The runtime lists the ready pods' containers, the
//     Service's ports and its endpoints (cluster IP and port, node ports,
//     load balancer ingresses). Delete removes everything labelled with
//     the instance (the Deployment in the foreground: its ReplicaSets and
//     pods first) and waits until it and its pods are gone.
//   - AppInst of an App with a deployment_manifest: its documents
//     (decoded with apimachinery's YAML reader, numbered from 1; their
//     kinds resolved through the cluster's discovery) are applied into
//     the cluster's namespace like everything else (server-side apply,
//     fenced), with the instance's labels and key annotations added to
//     each object and to the pod template of each workload. An object of
//     cluster scope or of another namespace, a kind the cluster does not
//     serve and a document that does not parse are refused
//     (executor.ErrBadObject) naming the object and its document, before
//     anything is written. A record ConfigMap (<instance>-manifest) lists
//     the resources written, so that an update deletes the objects the
//     manifest no longer holds and a delete finds every kind; it also
//     stands for the instance in ListInsts. A Deployment of the manifest
//     that sets no progressDeadlineSeconds gets the platform's. Readiness
//     waits for the manifest's Deployments and StatefulSets, with the same
//     reasons as above; power off and reboot are refused (ErrUnsupported).
//   - TrustPolicy: an egress NetworkPolicy in every namespace of the
//     cloudlet (tcp and udp rules to CIDRs and port ranges; DNS stays
//     allowed; icmp is refused: NetworkPolicies cannot express it); an
//     exception is one more egress NetworkPolicy for each instance it
//     applies to, in the instance's cluster's namespace, selecting that
//     instance's pods (edgekit.io/appinst) and removed on its own. An
//     egress NetworkPolicy restricts every pod it selects, so while the
//     namespace has no trust policy an exception's also allows everything,
//     and UpdateTrustPolicy closes and opens the exceptions as the policy
//     comes and goes.
//
// Everything the platform writes carries the labels
// app.kubernetes.io/managed-by=edgekit, edgekit.io/cloudlet,
// edgekit.io/cluster and (for an instance) edgekit.io/appinst, hashes of
// the owning keys, and the keys themselves as protojson annotations:
// ListInsts reads the inventory back from them (READY once a create
// finished, CREATING before), so Engine.Reconcile adopts and removes.
//
// Writes: server-side apply with the field manager "edgekit". A write
// under a claim's fence (executor.FenceFrom; the CCRM sets it) records the
// token in the annotation edgekit.io/fence and is refused (ErrFenced) when
// the object records a newer one. The check and the write are one step on
// the API server: the write carries the resourceVersion that was checked
// as a precondition (a create fails if the object appeared meanwhile, a
// delete carries uid and resourceVersion preconditions), and a write that
// loses that race reads the object again. An object is created with a
// plain create (so that a stale writer cannot recreate what a newer one
// made meanwhile) whose field ownership is then turned into the apply
// ownership of the field manager, so that a field later dropped from the
// App (an environment variable, a port) is removed by the next apply.
package kubernetes
