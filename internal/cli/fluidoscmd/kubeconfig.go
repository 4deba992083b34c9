package fluidoscmd

import (
	"errors"
	"fmt"
	"os"

	"github.com/edgekit/edgekit/fluidos"
)

// writeKubeconfig writes the kubeconfig of the credentials resp to path, readable
// by its owner only (a file that exists is truncated and made 0600 before
// anything is written to it), and says how to use it.
func (c *cli) writeKubeconfig(resp *fluidos.GetCredentialsResponse, path string) error {
	id := resp.GetAllocationId()
	if id == "" {
		id = resp.GetContractId()
	}
	kc := resp.GetCredentials().GetKubeconfig()
	if kc == "" {
		return fmt.Errorf("%s carries no kubeconfig: only a K8Slice sold by a node whose cloudlet is a Kubernetes cluster comes with one", id)
	}
	if err := writePrivate(path, []byte(kc)); err != nil {
		return fmt.Errorf("--kubeconfig: %w", err)
	}
	fmt.Fprintf(c.opts.ErrOut, "kubeconfig of %s written to %s (mode 0600); use it with: kubectl --kubeconfig %s get pods\n", id, path, path)
	return nil
}

// writePrivate writes b to path with mode 0600, whatever mode an
// existing file had.
func writePrivate(path string, b []byte) (err error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE, 0o600)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, f.Close()) }()
	if err := f.Chmod(0o600); err != nil {
		return err
	}
	if err := f.Truncate(0); err != nil {
		return err
	}
	_, err = f.Write(b)
	return err
}

// kubeconfigHint tells the buyer of what id names, whose credentials hold
// a kubeconfig (which the table does not show), how to use it.
func kubeconfigHint(id string) string {
	return fmt.Sprintf("the credentials include a kubeconfig of the slice's namespace: write it to a file only you read with "+
		"`show credentials %s --kubeconfig FILE` (mode 0600), then use `kubectl --kubeconfig FILE`", id)
}
