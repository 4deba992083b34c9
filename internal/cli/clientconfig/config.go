// Package clientconfig reads and writes edgectl's configuration file: named
// contexts, each saying how to reach one controller (address, TLS files, a
// token file), and which context is current. Tools that start a region (a
// one-command "up") write a context so that edgectl talks to it without
// flags.
//
// The file is YAML (JSON is YAML too):
//
//	current-context: local
//	contexts:
//	  - name: local
//	    addr: 127.0.0.1:55001
//	    token-file: admin.token   # relative paths are relative to this file
//	    ca-file: tls/ca.pem
//	    cert-file: ""             # client certificate, for mutual TLS
//	    key-file: ""
//	    server-name: ""           # name to verify in the server certificate
//	    insecure: false           # plaintext, no TLS
//
// Its path is $EDGECTL_CONFIG when set, else edgekit/edgectl.yaml under the
// user's configuration directory (os.UserConfigDir). Save writes it with
// mode 0600 through a rename, so a reader never sees half a file. Unknown
// keys are an error naming them, so a typo is never silently ignored.
package clientconfig

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"sigs.k8s.io/yaml"
)

// EnvPath is the environment variable that overrides the file's path.
const EnvPath = "EDGECTL_CONFIG"

// Config is the content of the file.
type Config struct {
	// CurrentContext names the context used when no --context is given.
	CurrentContext string `json:"current-context,omitempty"`
	// Contexts are the named contexts, in file order.
	Contexts []Context `json:"contexts,omitempty"`

	dir string // the file's directory, for relative paths; "" when not loaded
}

// Context says how to reach one controller.
type Context struct {
	Name string `json:"name"`
	// Addr is the controller's gRPC address, host:port.
	Addr string `json:"addr,omitempty"`
	// TokenFile holds the bearer token (surrounding white space is
	// ignored).
	TokenFile string `json:"token-file,omitempty"`
	// CAFile holds the PEM certificates that verify the controller.
	CAFile string `json:"ca-file,omitempty"`
	// CertFile and KeyFile are a client certificate for mutual TLS.
	CertFile string `json:"cert-file,omitempty"`
	KeyFile  string `json:"key-file,omitempty"`
	// ServerName is the name verified in the controller's certificate,
	// when it differs from the host of Addr.
	ServerName string `json:"server-name,omitempty"`
	// Insecure talks plaintext, without TLS.
	Insecure bool `json:"insecure,omitempty"`
}

// ErrNoContext is matched by the error of Lookup for a context the file
// does not have.
var ErrNoContext = errors.New("no such context")

// DefaultPath returns $EDGECTL_CONFIG when getenv says it is set, else
// edgekit/edgectl.yaml under os.UserConfigDir.
func DefaultPath(getenv func(string) string) (string, error) {
	if p := getenv(EnvPath); p != "" {
		return p, nil
	}
	dir, err := os.UserConfigDir()
	if err != nil {
		return "", fmt.Errorf("clientconfig: no configuration directory (set %s): %w", EnvPath, err)
	}
	return filepath.Join(dir, "edgekit", "edgectl.yaml"), nil
}

// Load reads the file at path. A file that does not exist is an empty
// Config.
func Load(path string) (*Config, error) {
	dir := filepath.Dir(path)
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return &Config{dir: dir}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("clientconfig: %w", err)
	}
	c := &Config{dir: dir}
	if err := yaml.UnmarshalStrict(data, c); err != nil {
		return nil, fmt.Errorf("clientconfig: %s: %w", path, err)
	}
	if err := c.validate(); err != nil {
		return nil, fmt.Errorf("clientconfig: %s: %w", path, err)
	}
	return c, nil
}

func (c *Config) validate() error {
	seen := map[string]bool{}
	for i, ctx := range c.Contexts {
		if ctx.Name == "" {
			return fmt.Errorf("context %d has no name", i+1)
		}
		if seen[ctx.Name] {
			return fmt.Errorf("context %q is defined twice", ctx.Name)
		}
		seen[ctx.Name] = true
	}
	if c.CurrentContext != "" && !seen[c.CurrentContext] {
		return fmt.Errorf("current-context %q: %w", c.CurrentContext, ErrNoContext)
	}
	return nil
}

// Save writes c to path (mode 0600; the directory is created with 0700 when
// missing), replacing the file atomically.
func (c *Config) Save(path string) error {
	if err := c.validate(); err != nil {
		return fmt.Errorf("clientconfig: %w", err)
	}
	data, err := yaml.Marshal(c)
	if err != nil {
		return fmt.Errorf("clientconfig: %w", err)
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("clientconfig: %w", err)
	}
	f, err := os.CreateTemp(dir, ".edgectl-*.yaml")
	if err != nil {
		return fmt.Errorf("clientconfig: %w", err)
	}
	defer os.Remove(f.Name()) // after a successful rename, there is nothing to remove
	if _, err := f.Write(data); err != nil {
		f.Close()
		return fmt.Errorf("clientconfig: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("clientconfig: %w", err)
	}
	if err := os.Rename(f.Name(), path); err != nil {
		return fmt.Errorf("clientconfig: %w", err)
	}
	return nil
}

// Lookup returns the context called name, or the current context when name
// is empty, with relative file paths made relative to the directory of the
// file it was loaded from. With no name and no current context it returns a
// zero Context and no error.
func (c *Config) Lookup(name string) (Context, error) {
	if name == "" {
		name = c.CurrentContext
		if name == "" {
			return Context{}, nil
		}
	}
	i := slices.IndexFunc(c.Contexts, func(x Context) bool { return x.Name == name })
	if i < 0 {
		return Context{}, fmt.Errorf("context %q: %w", name, ErrNoContext)
	}
	ctx := c.Contexts[i]
	for _, p := range []*string{&ctx.TokenFile, &ctx.CAFile, &ctx.CertFile, &ctx.KeyFile} {
		if *p != "" && !filepath.IsAbs(*p) && c.dir != "" {
			*p = filepath.Join(c.dir, *p)
		}
	}
	return ctx, nil
}

// Set adds ctx, or replaces the context of the same name, keeping file
// order.
func (c *Config) Set(ctx Context) {
	i := slices.IndexFunc(c.Contexts, func(x Context) bool { return x.Name == ctx.Name })
	if i < 0 {
		c.Contexts = append(c.Contexts, ctx)
		return
	}
	c.Contexts[i] = ctx
}

// Delete removes the context called name (and unsets it as current). It
// reports whether there was one.
func (c *Config) Delete(name string) bool {
	i := slices.IndexFunc(c.Contexts, func(x Context) bool { return x.Name == name })
	if i < 0 {
		return false
	}
	c.Contexts = slices.Delete(c.Contexts, i, i+1)
	if c.CurrentContext == name {
		c.CurrentContext = ""
	}
	return true
}
