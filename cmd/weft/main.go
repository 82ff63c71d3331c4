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
//	weft serve   run a node (embedded nats-server listening on a loopback
//	             port, or an external NATS) until SIGINT/SIGTERM;
//	             --demo leaves the demo run waiting for an approval
//
// Reading the log of a running node (--nats URL, default
// nats://127.0.0.1:4222) or of a stopped node's data directory (--data DIR),
// with the projections built in-process:
//
//	weft sessions         the sessions: agent, runs, last status, pending
//	weft show SESSION     a session's archive
//	weft approvals        the HITL queue: pending approvals and deferred calls
//	weft audit SESSION    a session's audit timeline
//	weft replay           rebuild every projection from position 0
//	weft replay-check S   re-run session S against its recorded model
//	                      responses and tool returns; report the first
//	                      diverging event
//	weft tail FILTER      live events matching a NATS subject filter
//	                      (--since POSITION, --last N: the log first)
//
// Running the agents a node hosts (weft serve --agents FILE), over its
// HTTP API (--url, $WEFT_URL; the token from $WEFT_TOKEN) or NATS:
//
//	weft run AGENT PROMPT   start a run and print the answer as it comes
//	                        (--no-wait, --session S, --idempotency-key K)
//	weft cancel SESSION [RUN]
//
// A unique prefix (4 characters or more) of a session, run or pending id
// stands for it.
//
// Deciding what a waiting run waits for, on a running node over NATS:
//
//	weft approve ID...  [--args JSON]
//	weft deny ID...     --reason R
//	weft complete ID... --result JSON
//	weft fail ID...     --reason R
//
// The command line is parsed by cobra and pflag (root.go, flags.go):
// --help, help and help COMMAND exit 0; version; completion bash|zsh|fish.
// The global flags (--nats/$NATS_URL, --url/$WEFT_URL with the token from
// $WEFT_TOKEN, --data, -o table|json|jsonl or --json, --timeout) mean the
// same in every command that takes them. Mistakes on the command line exit
// with status 2, other failures with status 1.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/pflag"
)

// command is one subcommand.
type command struct {
	summary string
	run     func(ctx context.Context, args []string, stdout, stderr io.Writer) error
}

// commands is the subcommand table.
var commands = map[string]command{
	"demo":         {"run an agent on the embedded runtime: parallel tools, an approval, the resume", runDemo},
	"chat":         {"run a one-off agent with a real model (openai:, anthropic:, openai-compatible:) and the demo's tools", runChat},
	"tools":        {"run the seed's tool examples through the registry and print their canonical returns", runTools},
	"serve":        {"run a node until interrupted (--demo: leave the demo run waiting for approval)", runServe},
	"run":          {"start a run of a hosted agent and print its answer as it comes (over the HTTP API with --url, else NATS)", runRun},
	"cancel":       {"cancel a run of a session (its last run by default)", runCancel},
	"sessions":     {"list the sessions in the log (--status, --agent)", runSessions},
	"show":         {"show a session's archive", runShow},
	"approvals":    {"list the pending approvals, deferred calls and elicitations (the HITL queue)", runApprovals},
	"audit":        {"print a session's audit timeline", runAudit},
	"replay":       {"rebuild every projection from the start of the log", runReplay},
	"replay-check": {"re-run a recorded session against its recorded responses and compare the events", runReplayCheck},
	"tail":         {"print live events matching a subject filter", runTail},
	"mcp":          {"serve the demo's tools over MCP (mcp serve: stdio, or --http)", runMCP},
	"approve":      {"approve pending calls on a running node", decideCommand(actionApprove)},
	"deny":         {"deny pending calls on a running node", decideCommand(actionDeny)},
	"complete":     {"complete deferred calls with a result on a running node", decideCommand(actionComplete)},
	"fail":         {"fail deferred calls on a running node", decideCommand(actionFail)},
	"answer":       {"answer a pending elicitation (a tool's question) on a running node", decideCommand(actionAnswer)},
}

// errUsage marks a command-line mistake (exit status 2).
var errUsage = errors.New("usage error")

func main() {
	// The CLI handles SIGINT and SIGTERM (weft serve stops cleanly on
	// either); the embedded nats-server installs no handlers.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(exitCode(err, os.Stderr))
}

// exitCode returns the process status of err (printing it): 0 for none or
// asked-for help, 2 for a command-line mistake, 1 for other failures.
func exitCode(err error, stderr io.Writer) int {
	switch {
	case err == nil, errors.Is(err, pflag.ErrHelp):
		return 0
	case errors.Is(err, errUsage):
		fmt.Fprintln(stderr, "weft:", err)
		return 2
	default:
		fmt.Fprintln(stderr, "weft:", err)
		return 1
	}
}
