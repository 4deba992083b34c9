package edgectl

import (
	"fmt"

	"github.com/spf13/cobra"
	"sigs.k8s.io/yaml"

	"github.com/edgekit/edgekit/internal/cli/clientconfig"
	"github.com/edgekit/edgekit/internal/cli/output"
)

// configPath returns the configuration file's path: --config-file,
// $EDGECTL_CONFIG or the default.
func (a *app) configPath() (string, error) {
	if a.config != "" {
		return a.config, nil
	}
	p, err := clientconfig.DefaultPath(a.opts.Getenv)
	if err != nil {
		return "", usageError{err}
	}
	return p, nil
}

// loadConfig loads the configuration file.
func (a *app) loadConfig() (string, *clientconfig.Config, error) {
	path, err := a.configPath()
	if err != nil {
		return "", nil, err
	}
	cfg, err := clientconfig.Load(path)
	if err != nil {
		return "", nil, usageError{err}
	}
	return path, cfg, nil
}

// configCommand is "config ...".
func (a *app) configCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "config",
		Short: "Show and change the configuration file's contexts",
		Long: `Show and change the configuration file: named contexts, each with a
controller's address, a token file and TLS files, and the current context.

The file is $EDGECTL_CONFIG, else edgekit/edgectl.yaml in the user's
configuration directory; --config-file overrides both. Connection flags
given on a command line override the context's settings.`,
		Args: a.noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cmd.AddCommand(
		&cobra.Command{
			Use:   "path",
			Short: "Print the configuration file's path",
			Args:  a.exactArgs(0),
			RunE: func(cmd *cobra.Command, _ []string) error {
				path, err := a.configPath()
				if err != nil {
					return err
				}
				fmt.Fprintln(cmd.OutOrStdout(), path)
				return nil
			},
		},
		&cobra.Command{
			Use:   "view",
			Short: "Print the configuration file",
			Args:  a.exactArgs(0),
			RunE: func(cmd *cobra.Command, _ []string) error {
				_, cfg, err := a.loadConfig()
				if err != nil {
					return err
				}
				b, err := yaml.Marshal(cfg)
				if err != nil {
					return err
				}
				_, err = cmd.OutOrStdout().Write(b)
				return err
			},
		},
		&cobra.Command{
			Use:   "get-contexts",
			Short: "List the contexts",
			Args:  a.exactArgs(0),
			RunE: func(cmd *cobra.Command, _ []string) error {
				_, cfg, err := a.loadConfig()
				if err != nil {
					return err
				}
				tw := output.NewTabWriter(cmd.OutOrStdout())
				fmt.Fprintln(tw, "CURRENT\tNAME\tADDR\tTLS")
				for _, c := range cfg.Contexts {
					cur := ""
					if c.Name == cfg.CurrentContext {
						cur = "*"
					}
					tls := "yes"
					if c.Insecure {
						tls = "no"
					}
					fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", cur, c.Name, c.Addr, tls)
				}
				return tw.Flush()
			},
		},
		&cobra.Command{
			Use:   "use-context NAME",
			Short: "Make a context the current one",
			Args:  a.exactArgs(1),
			RunE: func(cmd *cobra.Command, args []string) error {
				path, cfg, err := a.loadConfig()
				if err != nil {
					return err
				}
				if _, err := cfg.Lookup(args[0]); err != nil {
					return usagef("%s: %w", path, err)
				}
				cfg.CurrentContext = args[0]
				if err := cfg.Save(path); err != nil {
					return err
				}
				fmt.Fprintf(cmd.OutOrStdout(), "current context: %s\n", args[0])
				return nil
			},
		},
		a.setContextCommand(),
		&cobra.Command{
			Use:   "delete-context NAME",
			Short: "Delete a context",
			Args:  a.exactArgs(1),
			RunE: func(cmd *cobra.Command, args []string) error {
				path, cfg, err := a.loadConfig()
				if err != nil {
					return err
				}
				if !cfg.Delete(args[0]) {
					return usagef("%s: context %q: %w", path, args[0], clientconfig.ErrNoContext)
				}
				if err := cfg.Save(path); err != nil {
					return err
				}
				fmt.Fprintf(cmd.OutOrStdout(), "context %s deleted\n", args[0])
				return nil
			},
		},
	)
	return cmd
}

// setContextCommand is "config set-context NAME": the connection flags
// given are stored in the context (created when missing).
func (a *app) setContextCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "set-context NAME",
		Short: "Create or change a context from the connection flags given (--addr, --token-file, --ca-file, --cert-file, --key-file, --server-name, --insecure)",
		Args:  a.exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			fs := cmd.Flags()
			if fs.Changed("token") {
				return usagef("a context holds a token file, not a token: use --token-file")
			}
			path, cfg, err := a.loadConfig()
			if err != nil {
				return err
			}
			ctx := clientconfig.Context{Name: args[0]}
			for _, c := range cfg.Contexts { // as stored: paths stay relative
				if c.Name == args[0] {
					ctx = c
				}
			}
			for name, dst := range map[string]*string{
				"addr": &ctx.Addr, "token-file": &ctx.TokenFile, "ca-file": &ctx.CAFile,
				"cert-file": &ctx.CertFile, "key-file": &ctx.KeyFile, "server-name": &ctx.ServerName,
			} {
				if fs.Changed(name) {
					*dst, _ = fs.GetString(name)
				}
			}
			if fs.Changed("insecure") {
				ctx.Insecure, _ = fs.GetBool("insecure")
			}
			cfg.Set(ctx)
			if cfg.CurrentContext == "" {
				cfg.CurrentContext = ctx.Name
			}
			if err := cfg.Save(path); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "context %s saved in %s\n", ctx.Name, path)
			return nil
		},
	}
}

// exactArgs is cobra.ExactArgs as a usage error.
func (a *app) exactArgs(n int) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if err := cobra.ExactArgs(n)(cmd, args); err != nil {
			return usageError{err}
		}
		return nil
	}
}
