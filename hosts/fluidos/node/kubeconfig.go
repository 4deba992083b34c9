package node

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"k8s.io/client-go/tools/clientcmd"

	"github.com/edgekit/edgekit/platforms/kubernetes"
)

// kubeconfigFlag reads --kubeconfig (path, "" for none) into the access
// variables of the node's Kubernetes platform. It goes with --platform
// kubernetes (without it, the platform uses the configuration of the pod
// the node runs in). Errors name the file and never quote its content.
func kubeconfigFlag(o *Options, path string) error {
	switch {
	case path == "":
		return nil
	case o.PlatformType != kubernetes.PlatformType:
		return fmt.Errorf("--kubeconfig goes with --platform %s (not %q)", kubernetes.PlatformType, o.PlatformType)
	}
	data, err := os.ReadFile(path)
	if pe := (*fs.PathError)(nil); errors.As(err, &pe) {
		return fmt.Errorf("--kubeconfig %s: %v", path, pe.Err)
	} else if err != nil {
		return fmt.Errorf("--kubeconfig %s: %v", path, err)
	}
	if len(strings.TrimSpace(string(data))) == 0 {
		return fmt.Errorf("--kubeconfig %s: the file is empty", path)
	}
	// The parse error may quote the file: it is not passed on.
	if _, err := clientcmd.RESTConfigFromKubeConfig(data); err != nil {
		return fmt.Errorf("--kubeconfig %s: not a usable kubeconfig", path)
	}
	o.PlatformAccessVars = map[string]string{kubernetes.AccessVarKubeconfig: string(data)}
	return nil
}
