// Package k8s holds the tests of FLUIDOS nodes whose cloudlet is a
// Kubernetes cluster (platforms/kubernetes on a real control plane from
// internal/testenv/k8senv): a package of its own, as its TestMain runs
// that control plane.
package k8s
