// Command weft is the weft command-line program. Each subcommand is a
// function of (ctx, args, stdout, stderr) so it can be tested in-process;
// main only wires the process to it.
//
// Usage:
//
//	weft demo    run a real agent on the embedded default (nats-server +
//	             JetStream): two tools in parallel, then a deploy that waits
//	             for an approval decided by a flag (-approve, -deny REASON),
//	             resumed to completion; prints every event of the session
//	weft tools   run the seed's tool examples through the registry and
//	             print each canonical tool return
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"
)

// command is one subcommand.
type command struct {
	summary string
	run     func(ctx context.Context, args []string, stdout, stderr io.Writer) error
}

// commands is the subcommand table; later commands (serve, replay, audit,
// tail, approve) are added here.
var commands = map[string]command{
	"demo":  {"run an agent on the embedded runtime: parallel tools, an approval, the resume", runDemo},
	"tools": {"run the seed's tool examples through the registry and print their canonical returns", runTools},
}

// errUsage marks a command-line mistake (exit status 2).
var errUsage = errors.New("usage error")

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	switch {
	case errors.Is(err, errUsage), errors.Is(err, flag.ErrHelp):
		os.Exit(2)
	case err != nil:
		fmt.Fprintln(os.Stderr, "weft:", err)
		os.Exit(1)
	}
}

// run dispatches args[0] to its subcommand.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("weft", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { usage(stderr) }
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	if fs.NArg() == 0 {
		usage(stderr)
		return fmt.Errorf("%w: no command", errUsage)
	}
	name := fs.Arg(0)
	cmd, ok := commands[name]
	if !ok {
		usage(stderr)
		return fmt.Errorf("%w: unknown command %q", errUsage, name)
	}
	return cmd.run(ctx, fs.Args()[1:], stdout, stderr)
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: weft <command> [flags]\n\ncommands:")
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-8s %s\n", n, commands[n].summary)
	}
}
