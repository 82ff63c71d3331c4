package main

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/pflag"
)

// globalFlags are the flags every command that takes them spells and means
// the same way. weft --help describes them once; a command's own help
// names the ones it takes and lists only its other flags.
var globalFlags = []string{"nats", "url", "data", "output", "json", "timeout"}

// flagCollector is a writer that a command's flag set registers itself
// with (see newFlagSet): completion builds a command's flags by running it
// with --help and an io.Discard collector.
type flagCollector struct {
	io.Writer
	fs *pflag.FlagSet
}

// newFlagSet returns a flag set for command name whose usage prints synopsis
// and about, the command's own flags, then the global flags it takes.
func newFlagSet(name, synopsis, about string, stderr io.Writer) *pflag.FlagSet {
	fs := pflag.NewFlagSet(name, pflag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.SortFlags = false
	if c, ok := stderr.(*flagCollector); ok {
		c.fs = fs
	}
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: weft %s %s\n\n%s\n", name, synopsis, strings.TrimSpace(about))
		own := pflag.NewFlagSet(name, pflag.ContinueOnError)
		own.SortFlags = false
		var global []string
		fs.VisitAll(func(f *pflag.Flag) {
			if slices.Contains(globalFlags, f.Name) {
				global = append(global, flagName(f))
				return
			}
			own.AddFlag(f)
		})
		if own.HasFlags() {
			fmt.Fprintf(stderr, "\nflags:\n%s", own.FlagUsages())
		}
		if len(global) > 0 {
			fmt.Fprintf(stderr, "\nglobal flags (weft --help describes them): %s\n", strings.Join(global, ", "))
		}
	}
	return fs
}

// flagName is how f is written on the command line: -o/--output or --name.
func flagName(f *pflag.Flag) string {
	if f.Shorthand != "" {
		return "-" + f.Shorthand + "/--" + f.Name
	}
	return "--" + f.Name
}

// normaliseArgs rewrites the single-dash long flags of fs (-approve,
// -json=true, the spelling of Go's flag package that the README and older
// scripts use) to pflag's double dash, leaving shorthands (-o json), flag
// values and everything after "--" alone.
func normaliseArgs(fs *pflag.FlagSet, args []string) []string {
	out := make([]string, 0, len(args))
	takesValue := false // the previous argument is a flag whose value is next
	for i, a := range args {
		if takesValue {
			out = append(out, a)
			takesValue = false
			continue
		}
		if a == "--" {
			return append(out, args[i:]...)
		}
		name, hasValue := "", strings.Contains(a, "=")
		switch {
		case strings.HasPrefix(a, "--"):
			name, _, _ = strings.Cut(a[2:], "=")
		case strings.HasPrefix(a, "-") && len(a) > 2:
			name, _, _ = strings.Cut(a[1:], "=")
			if fs.Lookup(name) != nil {
				a = "-" + a
			}
		case strings.HasPrefix(a, "-") && len(a) == 2:
			if f := fs.ShorthandLookup(a[1:]); f != nil {
				name = f.Name
			}
		}
		if f := fs.Lookup(name); f != nil && !hasValue && f.NoOptDefVal == "" {
			takesValue = true
		}
		out = append(out, a)
	}
	return out
}

// parseFlags parses args with fs after normaliseArgs. Mistakes are errUsage
// (the usage is printed); -h and --help are pflag.ErrHelp.
func parseFlags(fs *pflag.FlagSet, args []string) error {
	if err := fs.Parse(normaliseArgs(fs, args)); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return err
		}
		fs.Usage()
		return fmt.Errorf("%w: %s: %v", errUsage, fs.Name(), err)
	}
	return nil
}

// parseArgs parses args with fs, flags and positional arguments in any
// order ("approve ID --by alice"), and returns the positional arguments.
// "--" ends the flags.
func parseArgs(fs *pflag.FlagSet, args []string) ([]string, error) {
	if err := parseFlags(fs, args); err != nil {
		return nil, err
	}
	if fs.NArg() == 0 {
		return nil, nil
	}
	return fs.Args(), nil
}

// usageError prints fs's usage and returns an errUsage saying what is wrong.
func usageError(fs *pflag.FlagSet, format string, args ...any) error {
	fs.Usage()
	return fmt.Errorf("%w: %s: %s", errUsage, fs.Name(), fmt.Sprintf(format, args...))
}

// setFlags returns the names of the flags set on the command line.
func setFlags(fs *pflag.FlagSet) map[string]bool {
	set := map[string]bool{}
	fs.Visit(func(f *pflag.Flag) { set[f.Name] = true })
	return set
}
