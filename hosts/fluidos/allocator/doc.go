// Package allocator is the part of a FLUIDOS node that provisions what it
// sold: it drives the lifecycle engine (executor.Engine), the same one the
// CRM and the CCRM run, on the node's platform (local in production, fake
// in tests), and reports progress, health and credentials into each
// contract's Allocation, which the buyer follows over REAR.
//
// # Objects and reports
//
// The node is one cloudlet ("fluidos", node ID). What an allocation makes
// is kept in the node's store as the engine's objects (ClusterInst, App,
// AppInst), keyed in the buyer's organization and named after the
// allocation ("a-<contract>"; a buyer's instance on a slice adds
// ".<name>"). The engine reads them through Getters and Listers over the
// store and reports through Senders that apply each report to the
// object's Info (ClusterInstInfo, AppInstInfo) and mirror its state onto
// the object, in one store transaction, as a controller does; an object
// reported DELETE_DONE is deleted. A report on an allocation's own object
// also sets the allocation's task and step while the operation runs.
//
// # Provisioning
//
// Each allocation is converged by a worker, woken when its contract is
// made, when a release is asked, and at every health check:
//
//   - K8Slice: a cluster sized to the partition sold (one node pool whose
//     "cpu", "memory" and "pods" the local platform enforces as the
//     cluster's quota; the Kubernetes platform makes it a namespace whose
//     ResourceQuota is these and "gpu" and "storage") and a random token;
//     the buyer gets the slice's id, the node's REAR endpoint and the
//     token, with which it runs instances of the node's images on the
//     slice (SliceHandler). When the platform issues scoped cluster
//     credentials (executor.ClusterCredentialsPlatform: the Kubernetes
//     platform), the buyer also gets a kubeconfig confined to the slice's
//     namespace, whose token outlives the contract's end; when a renewal
//     pushes the end past it, or once after a restart, a new one is
//     issued. The teardown revokes them before it deletes the cluster.
//     Such a slice is made between its purchase and the purchase's
//     answer, which carries the kubeconfig (IssuesKubeconfig, see
//     provider.KubeconfigIssuer).
//   - Service: the blueprint's "app" template rendered with the buyer's
//     validated configuration (Go text/template, no HTML escaping; a
//     missing key is an error; functions image and json) into an App,
//     kept once rendered; a cluster of its own; an instance of the App.
//     Once it runs, the buyer gets the "credentials" template rendered
//     with its endpoint (endpoint, username, password). An App's command
//     must be an image of the node's catalog (Config.Images).
//   - Service of a blueprint in the FLUIDOS reference's format (templates
//     whose service_data are Kubernetes manifests, on a node whose
//     cloudlet is a Kubernetes cluster; refused elsewhere): checked when
//     the blueprint is loaded (CheckBlueprint: each template parses, its
//     placeholders are properties of the configuration schema, each
//     document decodes with apiVersion, kind and metadata.name), then at
//     purchase rendered with the buyer's configuration (text/template,
//     no HTML escaping; functions json and b64enc) into an App given as a
//     manifest: every object without its namespace (the platform puts it
//     into the namespace of the allocation's cluster) and labelled
//     reservation.fluidos.eu/contract=<contract>. The platform counts it
//     ready when its Deployments and StatefulSets are available; a
//     restart applies the objects again. The buyer gets credentials
//     shaped like the reference's Secret: endpoints (each port of the
//     Services labelled nodecore.fluidos.eu/flavor-service-endpoint=true,
//     "<service>.<namespace>.svc.cluster.local:<port>", comma-joined, as
//     the platform reports their cluster DNS names), username and
//     password from the configuration, and database for the "database"
//     category. When the buyer also holds an ACTIVE slice of this node,
//     the same credentials go into each such slice's namespace as a
//     Secret credentials-<contract>, labelled with the contract and
//     nodecore.fluidos.eu/flavor-service-credentials=true, which the
//     slice's kubeconfig reads (shareCredentials: an instance of an App
//     given as that manifest, on the slice's cluster, owned by the slice;
//     a slice bought later gets it at the next health check). The release
//     deletes the namespace and all in it, and those Secrets; a slice
//     that ends first takes its Secret along.
//   - VM and Sensor: refused at reservation (Admit), never accepted and
//     then failed; a Service asking hosting policy Consumer likewise.
//
// Engine operations adopt what exists and delete what is absent, so a
// worker re-runs them freely; a create that fails (CREATE_ERROR) fails
// the allocation, which records why, is torn down and ends ERROR.
//
// # Health
//
// Every HealthInterval the allocator runs the engine's Reconcile on the
// cloudlet (what the platform runs is reported with its runtime; what is
// missing is created again) and wakes every allocation. A service whose
// process is not running, or that does not answer Config.Probe, is
// reported DEGRADED and restarted through the engine (an update asking
// for a reboot); it is ACTIVE again once healthy. A service of Kubernetes
// manifests is unhealthy when one of its Deployments or StatefulSets is
// no longer available (scaled down, its pods gone or not ready, or
// deleted), as the platform reports at each check; its restart applies
// the manifests again and waits until they are available. A service restarted
// MaxRestarts times, or whose restarts fail three times in a row, fails.
//
// # Teardown and restarts
//
// An allocation marked for release (by its buyer, by its seller, by the
// expiry of its contract, or by its failure) is torn down: its instances,
// its apps and its cluster are deleted through the engine; then
// Ledger.Finish puts what was sold back on sale and releases the contract.
// Everything is in the store and every step is idempotent, so a node
// killed at any instant converges after its restart: Start reconciles the
// platform with the store first (interrupted creates and deletes run
// again), then resumes every allocation that has not ended. On a graceful
// stop, operations in flight get StopTimeout to finish; one cancelled is
// recorded as still requested, and runs again at the next start.
//
// # Secrets
//
// The buyer's configuration, the rendered App's secret environment
// values, slice tokens, kubeconfigs and credentials live in the store only; nothing is
// logged but keys, and an error of a template has every configuration
// value it quotes replaced by "[redacted]".
package allocator
