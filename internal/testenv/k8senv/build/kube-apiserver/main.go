// Command kube-apiserver is the upstream kube-apiserver of the pinned
// k8s.io/kubernetes version, built for the test environment of package k8senv.
package main

import (
	"os"

	"k8s.io/component-base/cli"
	"k8s.io/kubernetes/cmd/kube-apiserver/app"
)

func main() {
	os.Exit(cli.Run(app.NewAPIServerCommand()))
}
