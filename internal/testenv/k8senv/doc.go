// Package k8senv starts a real Kubernetes control plane for tests: the
// upstream kube-apiserver, kube-controller-manager and kube-scheduler of a
// pinned Kubernetes version, backed by an embedded etcd, with simulated
// nodes from kwok (pods become Running; no containers run). Everything
// listens on 127.0.0.1 on free ports, keeps its files in a temporary
// directory, and is stopped by pid in Close. No Kubernetes API is mocked.
//
// The binaries are built once per machine, outside the work tree, by `make
// k8s-testenv` (from the small module in build/, which pins the versions);
// Binaries says where they are. A test package starts one control plane for
// all its tests and stops it when they end:
//
//	func TestMain(m *testing.M) { k8senv.Shared(m) }
//
//	func TestX(t *testing.T) {
//		env := k8senv.ForTest(t) // started on first use
//		...
//	}
//
// Where the binaries are missing ForTest skips the test with a message that
// says how to build them, except in CI (CI set to true), where it fails it.
// Tests that share an Env should keep to namespaces of their own.
//
// Users: AdminKubeconfig and RESTConfig are a system:masters user (bearer
// token from --token-auth-file). Kubeconfig(user, groups...) makes a bearer
// token for any user name at any time, authenticated by a token webhook the
// Env serves on loopback; such a user has no rights until RBAC grants some,
// which is what least-privilege tests need. The API server authorizes with
// RBAC only. The service CIDR (10.0.0.0/24) is a configuration value: no
// traffic goes to it.
package k8senv
