package main

import (
	"context"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
)

// versionReport is what weft version prints.
type versionReport struct {
	Version  string `json:"version"`            // the module version, (devel) when built from a checkout
	Commit   string `json:"commit,omitempty"`   // the VCS revision the binary was built from
	Modified bool   `json:"modified,omitempty"` // built from a working tree with changes
	Go       string `json:"go"`
}

// runVersion prints weft's version, commit and Go version.
func runVersion(_ context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("version", "[-o json]", "Prints weft's version, the commit it was built from and the Go version.", stderr)
	output := addOutputFlag(fs)
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usageError(fs, "takes no arguments, got %q", pos)
	}
	if err := output.check(); err != nil {
		return err
	}
	rep := versionReport{Version: "(unknown)", Go: runtime.Version()}
	if bi, ok := debug.ReadBuildInfo(); ok {
		rep.Version = bi.Main.Version
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				rep.Commit = s.Value
			case "vcs.modified":
				rep.Modified = s.Value == "true"
			}
		}
	}
	if output.json() {
		return output.write(stdout, rep)
	}
	commit := rep.Commit
	if commit == "" {
		commit = "unknown"
	}
	if rep.Modified {
		commit += ", modified"
	}
	_, err = fmt.Fprintf(stdout, "weft %s (commit %s, %s)\n", rep.Version, commit, rep.Go)
	return err
}
