package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
)

// The command tree, built afresh by run for every call (no package-level
// command state). Each group of commands lives in its own file: cli_events.go,
// cli_projections.go, cli_audit.go; single commands in cli_serve.go,
// cli_devtoken.go, cli_version.go, cli_healthcheck.go; e-invoices in
// cli_einvoice.go.
//
// Adding a subcommand to a group is one function in the group's file,
//
//	func newAuditSealCmd(c *cli) *cobra.Command {
//		var out string
//		cmd := &cobra.Command{
//			Use:   "seal",
//			Short: "...",
//			Args:  noArgs,
//			RunE: func(cmd *cobra.Command, args []string) error {
//				return withDatabases(cmd.Context(), c.getenv, ...)
//			},
//		}
//		cmd.Flags().StringVar(&out, "out", "", "...")
//		return cmd
//	}
//
// plus its name in the group constructor's AddCommand. finishTree then makes
// its argument errors usage errors (exit 2) and, when Args is left nil,
// refuses positional arguments; flag errors are usage errors through the
// root's FlagErrorFunc. Read the environment only through c.getenv, write
// to cmd.OutOrStdout() and cmd.ErrOrStderr(), use cmd.Context(), and
// return usageErrorf(cmd, ...) for a usage error found in RunE.
// cli_test.go walks the whole tree: every command's --help must exit 0 and
// name its flags.

// cli is what the commands share: the environment, read only through
// getenv.
type cli struct {
	getenv func(string) string
}

func newRootCmd(getenv func(string) string) *cobra.Command {
	c := &cli{getenv: getenv}
	root := &cobra.Command{
		Use:   "invoicing",
		Short: "The invoicing service and its operator tools",
		Long: `invoicing is the invoicing REST API (serve) and the tools to run it:
development tokens, event export, projection status, rebuild and retry, an
audit of the read models against the events, a health check, and a check of
EN 16931 e-invoices.

serve and the database commands are configured by environment variables
(DATABASE_URL, EVENTSTORE_URL, ...: see docs/configuration.md). Usage errors exit 2,
other failures exit 1.`,
		Version:       currentBuild().String(),
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetVersionTemplate("{{.Version}}\n")
	// Groups are runnable (so that a missing or unknown subcommand is a
	// usage error, not a help page that exits 0); keep their usage line to
	// "invoicing events [command]".
	root.SetUsageTemplate(strings.Replace(root.UsageTemplate(),
		"{{if .Runnable}}", "{{if and .Runnable (not .HasAvailableSubCommands)}}", 1))
	root.SetFlagErrorFunc(usageError)

	root.AddCommand(
		newServeCmd(c),
		newDevTokenCmd(c),
		newEventsCmd(c),
		newProjectionsCmd(c),
		newAuditCmd(c),
		newVersionCmd(),
		newHealthcheckCmd(c),
		newEinvoiceCmd(),
	)
	root.SetHelpCommand(newHelpCmd(root))
	root.InitDefaultHelpCmd()
	root.InitDefaultCompletionCmd()
	finishTree(root)
	return root
}

// finishTree gives every command the same usage-error behaviour: a group
// (a command with subcommands and no Run of its own) rejects a missing or
// unknown subcommand; a command without Args takes no positional
// arguments; and every Args failure is a usage error.
func finishTree(cmd *cobra.Command) {
	if cmd.HasSubCommands() && cmd.Run == nil && cmd.RunE == nil {
		cmd.Args = cobra.ArbitraryArgs
		cmd.RunE = needSubcommand
	}
	if cmd.Args == nil {
		cmd.Args = noArgs
	}
	check := cmd.Args
	cmd.Args = func(cmd *cobra.Command, args []string) error {
		if err := check(cmd, args); err != nil {
			return usageError(cmd, err)
		}
		return nil
	}
	for _, sub := range cmd.Commands() {
		finishTree(sub)
	}
}

// noArgs is cobra.NoArgs with a plainer message.
func noArgs(_ *cobra.Command, args []string) error {
	if len(args) > 0 {
		return fmt.Errorf("takes no arguments, got %q", strings.Join(args, " "))
	}
	return nil
}

// needSubcommand is the RunE of a group: reached only without a known
// subcommand.
func needSubcommand(cmd *cobra.Command, args []string) error {
	var names []string
	for _, sub := range cmd.Commands() {
		if sub.IsAvailableCommand() {
			names = append(names, sub.Name())
		}
	}
	if len(args) == 0 {
		return usageErrorf(cmd, "missing command, one of: %s", strings.Join(names, ", "))
	}
	if s := cmd.SuggestionsFor(args[0]); len(s) > 0 {
		return usageErrorf(cmd, "unknown command %q, did you mean %s?", args[0], strings.Join(s, " or "))
	}
	return usageErrorf(cmd, "unknown command %q, want one of: %s", args[0], strings.Join(names, ", "))
}

// usageError makes err (from cobra or pflag: unknown flag, bad value, wrong
// arguments) a one-line usage error naming cmd.
func usageError(cmd *cobra.Command, err error) error {
	if errors.Is(err, errUsage) {
		return err
	}
	return usageErrorf(cmd, "%s", strings.Join(strings.Fields(err.Error()), " "))
}

// usageErrorf is a one-line usage error about cmd: main prints it and exits 2.
func usageErrorf(cmd *cobra.Command, format string, args ...any) error {
	msg := fmt.Sprintf(format, args...)
	if name := commandName(cmd); name != "" {
		msg = name + ": " + msg
	}
	return fmt.Errorf("%w: %s (see '%s --help')", errUsage, msg, cmd.CommandPath())
}

// commandName is cmd's path without the program's name ("events read").
func commandName(cmd *cobra.Command) string {
	_, name, _ := strings.Cut(cmd.CommandPath(), " ")
	return name
}

// newHelpCmd replaces cobra's help command, which answers an unknown topic
// with exit 0.
func newHelpCmd(root *cobra.Command) *cobra.Command {
	return &cobra.Command{
		Use:   "help [command]...",
		Short: "Help about any command",
		Args:  cobra.ArbitraryArgs,
		ValidArgsFunction: func(_ *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
			target, rest, err := root.Find(args)
			if err != nil || len(rest) > 0 {
				return nil, cobra.ShellCompDirectiveNoFileComp
			}
			var out []cobra.Completion
			for _, sub := range target.Commands() {
				if sub.IsAvailableCommand() && strings.HasPrefix(sub.Name(), toComplete) {
					out = append(out, cobra.CompletionWithDesc(sub.Name(), sub.Short))
				}
			}
			return out, cobra.ShellCompDirectiveNoFileComp
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			target, rest, err := root.Find(args)
			if err != nil || len(rest) > 0 {
				return usageErrorf(cmd, "no command %q", strings.Join(args, " "))
			}
			return target.Help()
		},
	}
}

// outputFormat is the value of an --output flag.
type outputFormat string

const (
	outputText outputFormat = "text"
	outputJSON outputFormat = "json"
)

func (o *outputFormat) String() string { return string(*o) }
func (o *outputFormat) Type() string   { return "text|json" }
func (o *outputFormat) Set(v string) error {
	switch f := outputFormat(v); f {
	case outputText, outputJSON:
		*o = f
		return nil
	}
	return errors.New("want text or json")
}

// addOutputFlag gives cmd an --output (-o) flag, text by default.
func addOutputFlag(cmd *cobra.Command) *outputFormat {
	o := outputText
	cmd.Flags().VarP(&o, "output", "o", "output format: text, or json (one JSON document, described in docs/operations.md)")
	_ = cmd.RegisterFlagCompletionFunc("output", cobra.FixedCompletions(
		[]cobra.Completion{string(outputText), string(outputJSON)}, cobra.ShellCompDirectiveNoFileComp))
	return &o
}

// writeJSON writes v as one indented JSON document.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
