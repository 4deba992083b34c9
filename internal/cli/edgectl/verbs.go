package edgectl

import (
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/edgekit/edgekit/internal/apifields"
	"github.com/edgekit/edgekit/internal/cli/protoflags"
)

// verbCommand returns the command of a verb with one subcommand per kind
// that build returns one for.
func (a *app) verbCommand(verb, short string, build func(k *Kind) *cobra.Command) *cobra.Command {
	cmd := &cobra.Command{
		Use:                        verb + " KIND",
		Short:                      short,
		SuggestionsMinimumDistance: 2,
	}
	var names []string
	for _, k := range a.kinds {
		if c := build(k); c != nil {
			cmd.AddCommand(c)
			names = append(names, k.Name)
		}
	}
	cmd.Long = short + ".\n\nKinds: " + strings.Join(names, ", ") + "."
	// A command with subcommands is only run when no subcommand matched:
	// the argument is not a kind of this verb.
	cmd.Args = cobra.ArbitraryArgs
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if len(args) == 0 {
			return usagef("%s needs a kind: %s", cmd.CommandPath(), strings.Join(names, ", "))
		}
		msg := fmt.Sprintf("unknown kind %q for %s; kinds: %s", args[0], cmd.CommandPath(), strings.Join(names, ", "))
		if k := findKind(a.kinds, args[0]); k != nil {
			msg = fmt.Sprintf("%s cannot %s a %s; kinds: %s", cmd.Root().Name(), verb, k.Name, strings.Join(names, ", "))
		} else if s := cmd.SuggestionsFor(args[0]); len(s) > 0 {
			msg += fmt.Sprintf("; did you mean %q?", s[0])
		}
		return usagef("%s", msg)
	}
	return cmd
}

// kindCommand returns the command of a verb on a kind.
func (a *app) kindCommand(k *Kind, short string) *cobra.Command {
	use := k.Name + " [NAME]"
	args := cobra.MaximumNArgs(1)
	if k.Singleton {
		use, args = k.Name, cobra.NoArgs
	}
	return &cobra.Command{
		Use:     use,
		Aliases: k.Aliases,
		Short:   short,
		Args: func(cmd *cobra.Command, a []string) error {
			if err := args(cmd, a); err != nil {
				return usageError{err}
			}
			return nil
		},
	}
}

// access returns who may write the field of a flag of k's message.
func access(k *Kind, f *protoflags.Field) apifields.Access {
	return apifields.Of(k.Desc().FullName(), f.Flag)
}

// nameHelp is the help of the NAME argument of a kind.
func nameHelp(k *Kind) string {
	if k.Singleton {
		return ""
	}
	return `

NAME is the key's name field, or the whole key as field=value pairs
("organization=acme,name=edge1", the form edgectl prints).`
}

// fieldHelp is the help of the field flags.
const fieldHelp = `

Field flags are named by the field's path (proto names, '_' as '-'):
--key.organization, --platform-type, --location.latitude. Enums take their
value names without prefix, in any case; maps take key=value, repeated
fields one value per flag, repeated messages a JSON object or array, and
other messages JSON.`

// createCommand is "create KIND".
func (a *app) createCommand() *cobra.Command {
	return a.verbCommand("create", "Create an object", func(k *Kind) *cobra.Command {
		if k.Create == nil {
			return nil
		}
		cmd := a.kindCommand(k, "Create a "+k.Name)
		cmd.Long = "Create a " + k.Name + "." + nameHelp(k) + fieldHelp + progressHelp(k)
		noWait := a.noWaitFlag(cmd, k)
		file := fileFlag(cmd, "the "+k.Name+" from a YAML or JSON file ('-' reads standard input); field flags override it")
		in, err := a.newInput(cmd, k.Desc(), protoflags.Options{
			Include: func(f *protoflags.Field) bool { return access(k, f).CanCreate() },
			Usage: func(f *protoflags.Field) string {
				if access(k, f) == apifields.CreateOnly {
					return "cannot change after create"
				}
				return ""
			},
		})
		cmd.RunE = func(cmd *cobra.Command, args []string) error {
			if err != nil {
				return err
			}
			in.file = *file
			return a.runCreate(cmd, k, in, args, *noWait)
		}
		return cmd
	})
}

// updateCommand is "update KIND".
func (a *app) updateCommand() *cobra.Command {
	return a.verbCommand("update", "Change fields of an object", func(k *Kind) *cobra.Command {
		if k.Update == nil {
			return nil
		}
		cmd := a.kindCommand(k, "Change fields of a "+k.Name)
		cmd.Long = "Change the fields of a " + k.Name + " that the flags (or the file) name; the others keep their values." +
			nameHelp(k) + fieldHelp + `

Lists and maps are replaced; where the kind allows it, --FIELD-add and
--FIELD-remove add or remove elements (map keys) instead. --clear FIELD sets
a field back to empty.` + progressHelp(k)
		noWait := a.noWaitFlag(cmd, k)
		file := fileFlag(cmd, "the fields to change, from a YAML or JSON file ('-' reads standard input); field flags override it")
		clear := cmd.Flags().StringArray("clear", nil, "set a field back to empty (repeatable; a field path such as location or flavor-names)")
		in, err := a.newInput(cmd, k.Desc(), protoflags.Options{
			Include: func(f *protoflags.Field) bool {
				a := access(k, f)
				return a == apifields.Key || a.CanUpdate()
			},
			ListActions: true,
			Usage: func(f *protoflags.Field) string {
				if access(k, f) == apifields.Key {
					return "names the object"
				}
				return ""
			},
		})
		cmd.RunE = func(cmd *cobra.Command, args []string) error {
			if err != nil {
				return err
			}
			in.file = *file
			return a.runUpdate(cmd, k, in, args, *clear, *noWait)
		}
		return cmd
	})
}

// deleteCommand is "delete KIND".
func (a *app) deleteCommand() *cobra.Command {
	return a.verbCommand("delete", "Delete an object", func(k *Kind) *cobra.Command {
		if k.Delete == nil {
			return nil
		}
		cmd := a.kindCommand(k, "Delete a "+k.Name)
		cmd.Long = "Delete a " + k.Name + "." + nameHelp(k) + progressHelp(k)
		noWait := a.noWaitFlag(cmd, k)
		file := fileFlag(cmd, "read the key from a YAML or JSON file of the "+k.Name+" ('-' reads standard input)")
		in, err := a.newInput(cmd, k.Delete.Input(), protoflags.Options{
			Include: func(f *protoflags.Field) bool { return f.Path != "no_wait" },
		})
		cmd.RunE = func(cmd *cobra.Command, args []string) error {
			if err != nil {
				return err
			}
			return a.runDelete(cmd, k, in, args, *file, *noWait)
		}
		return cmd
	})
}

// fileFlag defines -f.
func fileFlag(cmd *cobra.Command, usage string) *string {
	return cmd.Flags().StringP("file", "f", "", usage)
}

// newInput builds the field flags of md on cmd, refusing names that clash
// with its own flags (define those first) or the global ones.
func (a *app) newInput(cmd *cobra.Command, md protoreflect.MessageDescriptor, opts protoflags.Options) (*input, error) {
	return newInput(md, cmd.Flags(), a.global, opts)
}

// actionCommands returns one command per action of the kinds
// ("rotate-access-key cloudlet NAME").
func (a *app) actionCommands() []*cobra.Command {
	var names []string
	for _, k := range a.kinds {
		for name := range k.Actions {
			if !slices.Contains(names, name) {
				names = append(names, name)
			}
		}
	}
	slices.Sort(names)
	var cmds []*cobra.Command
	for _, name := range names {
		cmds = append(cmds, a.verbCommand(name, "Call "+name+" on an object", func(k *Kind) *cobra.Command {
			md := k.Actions[name]
			if md == nil {
				return nil
			}
			cmd := a.kindCommand(k, fmt.Sprintf("Call %s on a %s", md.Name(), k.Name))
			cmd.Long = fmt.Sprintf("Call %s on a %s.", md.FullName(), k.Name) + nameHelp(k)
			noWait := a.noWaitFlag(cmd, k)
			in, err := a.newInput(cmd, md.Input(), protoflags.Options{
				Include: func(f *protoflags.Field) bool { return f.Path != "no_wait" },
			})
			cmd.RunE = func(cmd *cobra.Command, args []string) error {
				if err != nil {
					return err
				}
				return a.runAction(cmd, k, name, md, in, args, *noWait)
			}
			return cmd
		}))
	}
	return cmds
}

// noWaitFlag defines --no-wait on commands whose call streams progress.
func (a *app) noWaitFlag(cmd *cobra.Command, k *Kind) *bool {
	noWait := new(bool)
	if k.Streams() {
		cmd.Flags().BoolVar(noWait, "no-wait", false, "return once the controller stored the request, without waiting for the change")
	}
	return noWait
}

func progressHelp(k *Kind) string {
	if !k.Streams() {
		return ""
	}
	return `

The command shows the progress the resource manager reports until the change
ends (one line updated in place on a terminal, one line per message
otherwise) and fails with exit code 1 when the change fails; --no-wait
returns once the request is stored.`
}

// infoKind returns the Info twin of k, or nil.
func (a *app) infoKind(k *Kind) *Kind {
	return findKind(a.kinds, k.Name+"info")
}

// fullName is the kind's message name.
func fullName(k *Kind) protoreflect.FullName { return k.Desc().FullName() }
