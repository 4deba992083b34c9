package region

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"k8s.io/client-go/tools/clientcmd"
)

// readKubeconfig reads and checks the kubeconfig file path ("" is none):
// it must parse and name a current context with a cluster server. The
// error names the file and never quotes its content (it holds
// credentials), on one line.
func readKubeconfig(path string) ([]byte, error) {
	if path == "" {
		return nil, nil
	}
	bad := func(why string) error {
		return fmt.Errorf("region: kubeconfig %s: %s", path, strings.Join(strings.Fields(why), " "))
	}
	data, err := os.ReadFile(path)
	if pe := (*fs.PathError)(nil); errors.As(err, &pe) {
		return nil, bad(pe.Err.Error())
	} else if err != nil {
		return nil, bad(err.Error())
	}
	if len(strings.TrimSpace(string(data))) == 0 {
		return nil, bad("the file is empty")
	}
	cfg, err := clientcmd.Load(data)
	if err != nil {
		return nil, bad("not a kubeconfig: " + err.Error())
	}
	rc, err := clientcmd.NewDefaultClientConfig(*cfg, nil).ClientConfig()
	if err != nil {
		return nil, bad("not usable: " + err.Error())
	}
	if rc.Host == "" {
		return nil, bad("its current context names no cluster server")
	}
	return data, nil
}

// cloudlets are the region's cloudlets: the local ones, and the
// Kubernetes one when a kubeconfig was given.
func (u *upRun) cloudlets() []cloudletSpec {
	if len(u.kubeconfig) == 0 {
		return cloudlets
	}
	return append(append([]cloudletSpec(nil), cloudlets...), k8sCloudlet(u.kubeconfig))
}
