// Package executor is the lifecycle engine shared by every host of edgekit:
// the CRM (on the edge site, fed by the notify stream), the CCRM (N replicas
// off site, coordinating through etcd) and the FLUIDOS-style node.
//
// The engine receives objects whose TrackedState a user moved to a
// *_REQUESTED state, moves them through the matching *ING state to a final or
// error state by calling the platform roles (CloudletPlatform,
// ClusterPlatform, AppPlatform, TrustPolicyPlatform), and reports every step
// through a Sender per Info type. It never knows which host runs it.
package executor
