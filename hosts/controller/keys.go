package controller

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/edgekit/edgekit/atrest"
	"github.com/edgekit/edgekit/internal/cmdutil"
	"github.com/edgekit/edgekit/internal/etcd"
	"github.com/edgekit/edgekit/internal/store"
)

// keysUsage is the usage of the key commands.
const keysUsage = `usage:
  controller rewrap --data-dir DIR [flags]     seal every stored secret under the current key
  controller keys list --data-dir DIR [flags]  the keys, and how many stored values each one seals
  controller keys add --data-dir DIR           add a key; it becomes the one that encrypts
  controller keys remove ID --data-dir DIR     drop a key no stored value uses any more

The rewrap and the counts read the region's etcd: the running controller's
embedded one (its address is in DIR/etcd-endpoint; under --dev-tls with the
controller's certificate in DIR/tls) or --etcd-endpoints with the --etcd-*
certificate flags.
A key added takes effect in a process when it starts: restart the
controller (its start seals everything under the new key) or run rewrap.`

// keysMain runs "controller rewrap" and "controller keys ...": args
// start with the command's name.
func keysMain(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	cmd := args[0]
	args = args[1:]
	if cmd == "keys" {
		if len(args) == 0 || strings.HasPrefix(args[0], "-") {
			fmt.Fprintln(stderr, keysUsage)
			return fmt.Errorf("controller keys: want list, add or remove")
		}
		cmd, args = "keys "+args[0], args[1:]
	}
	var id string
	if cmd == "keys remove" {
		if len(args) == 0 || strings.HasPrefix(args[0], "-") {
			return fmt.Errorf("controller keys remove: want the id of the key to remove")
		}
		id, args = args[0], args[1:]
	}
	fs := flag.NewFlagSet("controller "+cmd, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprintln(stderr, keysUsage); fs.PrintDefaults() }
	var (
		dataDir, keyFile, region, endpoints, caFile, certFile, keyFileEtcd, after string
	)
	fs.StringVar(&dataDir, "data-dir", "", "the controller's data directory")
	fs.StringVar(&keyFile, "encryption-key-file", "", "the key file (default: <data-dir>/"+atrest.DefaultKeyFileName+")")
	fs.StringVar(&region, "region", "local", "name of the region")
	fs.StringVar(&endpoints, "etcd-endpoints", "", "comma-separated client URLs of the region's etcd (default: the one in <data-dir>/etcd-endpoint)")
	fs.StringVar(&caFile, "etcd-ca-file", "", "CA of an external etcd cluster")
	fs.StringVar(&certFile, "etcd-cert-file", "", "client certificate for an external etcd cluster")
	fs.StringVar(&keyFileEtcd, "etcd-key-file", "", "client key for an external etcd cluster")
	if cmd == "rewrap" {
		fs.StringVar(&after, "after", "", "resume after this etcd key (the last one an interrupted rewrap reported)")
	}
	if err := cmdutil.Parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("controller %s: unexpected arguments %q", cmd, fs.Args())
	}
	if keyFile == "" {
		if dataDir == "" {
			return fmt.Errorf("controller %s: give --data-dir or --encryption-key-file", cmd)
		}
		keyFile = filepath.Join(dataDir, atrest.DefaultKeyFileName)
	}
	if cmd == "keys add" {
		newID, err := atrest.AddKey(keyFile)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "added key %s to %s; it encrypts from the next start of each process (restart the controller, or run controller rewrap)\n", newID, keyFile)
		return nil
	}
	if cmd != "rewrap" && cmd != "keys list" && cmd != "keys remove" {
		fmt.Fprintln(stderr, keysUsage)
		return fmt.Errorf("controller: unknown command %q", cmd)
	}

	kr, err := atrest.OpenKeyFile(keyFile)
	if err != nil {
		return err
	}
	var eps []string
	if endpoints != "" {
		eps = strings.Split(endpoints, ",")
	} else {
		if dataDir == "" {
			return fmt.Errorf("controller %s: give --data-dir (of a running controller) or --etcd-endpoints", cmd)
		}
		b, err := os.ReadFile(filepath.Join(dataDir, "etcd-endpoint"))
		if err != nil {
			return fmt.Errorf("controller %s: the region's etcd: %w (is the controller running?)", cmd, err)
		}
		eps = []string{strings.TrimSpace(string(b))}
		if caFile == "" && certFile == "" && keyFileEtcd == "" && strings.HasPrefix(eps[0], "https://") {
			// A controller under --dev-tls: its etcd takes the
			// controller's etcd client certificate of the development
			// authority (certificate and key in one file).
			tlsDir := filepath.Join(dataDir, "tls")
			caFile = filepath.Join(tlsDir, "ca.crt")
			certFile = filepath.Join(tlsDir, etcd.DevClientCertName(devControllerName)+".pem")
			keyFileEtcd = certFile
		}
	}
	cli, err := etcd.NewClient(etcd.ClientConfig{Endpoints: eps, CAFile: caFile, CertFile: certFile, KeyFile: keyFileEtcd})
	if err != nil {
		return fmt.Errorf("controller %s: %w", cmd, err)
	}
	defer cli.Close()
	st, err := store.New(cli, region, store.WithEncryption(atrest.NewEnvelope(kr)))
	if err != nil {
		return err
	}
	// Register every kind, so that legacy plaintext values of the
	// sensitive ones are known.
	if _, err := New(Config{Store: st, Tokens: NewTokens()}); err != nil {
		return err
	}
	switch cmd {
	case "rewrap":
		res, err := st.Rewrap(ctx, store.RewrapOptions{After: after, Progress: func(p store.RewrapStats) {
			fmt.Fprintf(stderr, "scanned %d, rewrapped %d, up to %s\n", p.Scanned, p.Rewrapped, p.LastKey)
		}})
		if err != nil {
			return fmt.Errorf("%w; resume with --after %q", err, res.LastKey)
		}
		fmt.Fprintf(stdout, "rewrapped %d of %d values; every secret is sealed with key %s\n", res.Rewrapped, res.Scanned, kr.KeyIDs()[0])
		return nil
	case "keys list":
		usage, err := st.KeyUsage(ctx)
		if err != nil {
			return err
		}
		ids := kr.KeyIDs()
		fmt.Fprintf(stdout, "%-32s %-8s %s\n", "KEY", "CURRENT", "VALUES")
		for i, k := range ids {
			fmt.Fprintf(stdout, "%-32s %-8v %d\n", k, i == 0, usage[k])
		}
		for k, n := range usage {
			if k != "" && !slices.Contains(ids, k) {
				fmt.Fprintf(stdout, "%-32s %-8s %d (not in %s: these values cannot be read)\n", k, "missing", n, keyFile)
			}
		}
		if n := usage[""]; n > 0 {
			fmt.Fprintf(stdout, "%-32s %-8s %d (stored before encryption: run controller rewrap)\n", "(plaintext)", "-", n)
		}
		return nil
	default: // keys remove
		usage, err := st.KeyUsage(ctx)
		if err != nil {
			return err
		}
		if n := usage[id]; n > 0 {
			return fmt.Errorf("controller keys remove: key %s still seals %d stored values: run controller rewrap first", id, n)
		}
		if err := atrest.RemoveKey(keyFile, id); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "removed key %s from %s\n", id, keyFile)
		return nil
	}
}
