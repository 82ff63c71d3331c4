package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// The environment variables of the connection.
const (
	natsURLEnv  = "NATS_URL"   // default of --nats
	apiURLEnv   = "WEFT_URL"   // default of --url
	apiTokenEnv = "WEFT_TOKEN" // the API's bearer token (never a flag: it would show in ps and shell history)
)

// commandError carries the error of a command's body through cobra, so
// that run tells it from cobra's own (usage) errors. It has no Unwrap:
// cobra must not take a command's pflag.ErrHelp (its usage printed
// already) for its own and print cobra's help too.
type commandError struct{ err error }

func (e commandError) Error() string { return e.err.Error() }

// run runs the weft command line args: cobra finds the command, the
// command's body parses its own flags (see newFlagSet) and runs.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	root := newRootCmd(stdout, stderr)
	if len(args) > 0 && (args[0] == cobra.ShellCompRequestCmd || args[0] == cobra.ShellCompNoDescRequestCmd) {
		addCommandFlags(ctx, root)
	}
	root.SetArgs(args)
	_, err := root.ExecuteContextC(ctx)
	var ce commandError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &ce):
		return ce.err
	}
	// cobra's own mistakes: an unknown command or a bad global flag.
	rootUsage(root, stderr)
	return fmt.Errorf("%w: %v", errUsage, err)
}

// newRootCmd builds the command tree: one cobra command per entry of
// commands, each parsing its own flags, plus help, version and completion.
func newRootCmd(stdout, stderr io.Writer) *cobra.Command {
	root := &cobra.Command{
		Use:           "weft",
		Short:         "the weft command-line program",
		SilenceErrors: true,
		SilenceUsage:  true,
		Args:          cobra.ArbitraryArgs,
		RunE: func(c *cobra.Command, args []string) error {
			rootUsage(c, stderr)
			if len(args) > 0 {
				return commandError{fmt.Errorf("%w: unknown command %q", errUsage, args[0])}
			}
			return commandError{fmt.Errorf("%w: no command", errUsage)}
		},
	}
	root.SetOut(stdout)
	root.SetErr(stderr)
	addGlobalFlags(root.PersistentFlags())
	root.SetHelpFunc(func(c *cobra.Command, _ []string) {
		if c == root {
			rootUsage(c, stdout)
			return
		}
		// cobra's own commands (completion): its usage of them.
		fmt.Fprintf(stdout, "%s\n\n%s", strings.TrimSpace(c.Long+"\n"+c.Short), c.UsageString())
	})
	for _, name := range commandNames() {
		root.AddCommand(bodyCmd(name, commands[name], stdout, stderr))
	}
	root.AddCommand(bodyCmd("version", command{"print weft's version, commit and Go version", runVersion}, stdout, stderr))
	root.SetHelpCommand(&cobra.Command{
		Use:   "help [command]",
		Short: "print the help of weft or of a command",
		RunE: func(c *cobra.Command, args []string) error {
			sub, rest, err := root.Find(args)
			switch {
			case len(args) == 0 || (err == nil && sub == c):
				rootUsage(root, stdout)
				return nil
			case err != nil || sub == root:
				rootUsage(root, stderr)
				return commandError{fmt.Errorf("%w: help: unknown command %q", errUsage, strings.Join(args, " "))}
			case !sub.DisableFlagParsing:
				// cobra's own commands (completion and its shells).
				sub.SetOut(stdout)
				return sub.Help()
			}
			// The command prints its own usage on --help (to stdout).
			err = sub.RunE(sub, append(slices.Clone(rest), "--help"))
			var ce commandError
			if errors.As(err, &ce) && errors.Is(ce.err, pflag.ErrHelp) {
				return nil
			}
			return err
		},
	})
	root.CompletionOptions.HiddenDefaultCmd = false
	return root
}

// bodyCmd is the cobra command of a command body: it parses its own flags
// (so cobra does not), and asked-for help goes to stdout.
func bodyCmd(name string, cmd command, stdout, stderr io.Writer) *cobra.Command {
	return &cobra.Command{
		Use:                name,
		Short:              cmd.summary,
		DisableFlagParsing: true,
		SilenceErrors:      true,
		SilenceUsage:       true,
		RunE: func(c *cobra.Command, args []string) error {
			w := stderr
			if wantsHelp(args) {
				w = stdout // asked-for help is output, not a complaint
			}
			if err := cmd.run(c.Context(), args, stdout, w); err != nil {
				return commandError{err}
			}
			return nil
		},
	}
}

// wantsHelp says whether args (before any "--") ask for help.
func wantsHelp(args []string) bool {
	for _, a := range args {
		switch a {
		case "--":
			return false
		case "-h", "--help", "-help":
			return true
		}
	}
	return false
}

// commandNames returns the names of commands, sorted.
func commandNames() []string {
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// addGlobalFlags defines the global flags once, for weft --help and for
// completion. Each command parses the ones it takes itself (addSourceFlags,
// addOutputFlag, addAPIFlags) with the same names and meaning.
func addGlobalFlags(fs *pflag.FlagSet) {
	fs.String("nats", "", "a running node's NATS `URL`, a comma-separated list for a cluster (default $"+natsURLEnv+", else "+defaultNATSURL+")")
	fs.String("url", "", "a node's HTTP API base `URL` (weft run, weft cancel; default $"+apiURLEnv+"); the bearer token is read from $"+apiTokenEnv+", never a flag")
	fs.String("data", "", "a node's data `DIR`: the node's own (serve, demo) or a stopped node's log to read")
	fs.StringP("output", "o", outTable, "print `FORMAT`: table, json or jsonl (field names as in the HTTP API)")
	fs.Bool("json", false, "the same as -o json")
	fs.Duration("timeout", defaultTimeout, "give up after this long")
}

// rootUsage prints weft's usage: the commands and the global flags.
func rootUsage(root *cobra.Command, w io.Writer) {
	var b strings.Builder
	b.WriteString("usage: weft <command> [flags]\n\ncommands:\n")
	for _, c := range root.Commands() {
		if c.Hidden {
			continue
		}
		fmt.Fprintf(&b, "  %-13s %s\n", c.Name(), c.Short)
	}
	b.WriteString("\nglobal flags (each command takes the ones it uses; weft help COMMAND lists them):\n")
	b.WriteString(root.PersistentFlags().FlagUsages())
	fmt.Fprintf(&b, "\nenvironment:\n  %-12s the default of --nats\n  %-12s the default of --url\n  %-12s the HTTP API's bearer token\n", natsURLEnv, apiURLEnv, apiTokenEnv)
	b.WriteString("\nA mistake on the command line exits with status 2, other failures with 1.\n")
	fmt.Fprint(w, b.String())
}

// addCommandFlags gives each command of root its own flags, for shell
// completion only (the commands parse their flags themselves): each
// command's body builds its flag set and stops at --help.
func addCommandFlags(ctx context.Context, root *cobra.Command) {
	for _, c := range root.Commands() {
		cmd, ok := commands[c.Name()]
		if !ok {
			continue
		}
		col := &flagCollector{Writer: io.Discard}
		_ = cmd.run(ctx, []string{"--help"}, io.Discard, col)
		if col.fs != nil {
			col.fs.VisitAll(func(f *pflag.Flag) {
				if root.PersistentFlags().Lookup(f.Name) == nil {
					c.Flags().AddFlag(f)
				}
			})
		}
	}
}
