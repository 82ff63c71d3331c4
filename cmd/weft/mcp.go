package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/spf13/pflag"

	"github.com/weft-run/weft/bus"
	"github.com/weft-run/weft/mcpserve"
)

// mcpTokenEnv is the default environment variable of weft mcp serve's
// HTTP bearer token.
const mcpTokenEnv = "WEFT_MCP_TOKEN"

// mcpOptions are the flags of weft mcp serve.
type mcpOptions struct {
	node     nodeConfig
	http     string // serve streamable HTTP here; "" serves stdio
	tokenEnv string
}

func parseMCPFlags(args []string, stderr io.Writer) (mcpOptions, error) {
	var o mcpOptions
	fs := newFlagSet("mcp serve", "[--http HOST:PORT [--token-env VAR]] [--data DIR] [--listen HOST:PORT]", `
Serves the demo's tools (lookup, fetch_ticket, and deploy, which needs an
approval) over the Model Context Protocol: on standard input and output (the
default, for a client that starts it as a subprocess) or over streamable HTTP
(--http). Each tool call runs as a recorded weft run on a node of its own;
a call that needs an approval answers "approval pending" and waits in the
HITL queue (weft approvals / weft approve --nats URL --creds-dir DIR, printed
at start), and the client's same call, sent again after the decision, gets
the tool's result. Notes go to standard error.`, stderr)
	fs.StringVar(&o.http, "http", "", "serve streamable HTTP on `HOST:PORT` instead of stdio (port 0: any free port)")
	fs.StringVar(&o.tokenEnv, "token-env", mcpTokenEnv, "with --http: the environment `VARIABLE` holding the bearer token clients must send (required unless HOST is loopback)")
	fs.StringVar(&o.node.dataDir, "data", "", "keep the event log in `DIR` (default: a temporary directory, removed at exit)")
	fs.StringVar(&o.node.listen, "listen", defaultListen, "the `HOST:PORT` the node's embedded NATS server accepts other weft commands on (port -1: any free port)")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return o, err
	}
	switch {
	case len(pos) > 0:
		return o, usageError(fs, "takes no arguments, got %q", pos)
	case o.node.listen == "":
		return o, usageError(fs, "--listen needs HOST:PORT (weft approve connects there)")
	case o.http != "" && o.tokenEnv == "":
		return o, usageError(fs, "--token-env needs a variable name")
	}
	return o, nil
}

// runMCP runs weft mcp SUBCOMMAND; serve is the only one.
func runMCP(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] != "serve" {
		fmt.Fprint(stderr, "usage: weft mcp serve [flags] (weft mcp serve -h lists them)\n")
		if len(args) > 0 && (args[0] == "-h" || args[0] == "--help" || args[0] == "help") {
			return pflag.ErrHelp
		}
		return fmt.Errorf("%w: mcp: the subcommand is serve", errUsage)
	}
	o, err := parseMCPFlags(args[1:], stderr)
	if err != nil {
		return err
	}
	token := ""
	if o.http != "" {
		token = os.Getenv(o.tokenEnv)
		host, _, err := net.SplitHostPort(o.http)
		if err != nil {
			return fmt.Errorf("%w: mcp serve: --http %q: %v", errUsage, o.http, err)
		}
		if token == "" && !bus.IsLoopback(host) {
			return fmt.Errorf("%w: mcp serve: --http %s accepts other machines' clients: set the bearer token in $%s", errUsage, o.http, o.tokenEnv)
		}
	}
	n, err := startNode(ctx, o.node)
	if err != nil {
		return fmt.Errorf("mcp serve: %w", err)
	}
	defer func() {
		if cerr := n.close(); cerr != nil && err == nil {
			err = fmt.Errorf("mcp serve: %w", cerr)
		}
	}()
	cfg, err := demoAgentConfig()
	if err != nil {
		return fmt.Errorf("mcp serve: build the tools: %w", err)
	}
	cfg.Model = nil
	srv, err := mcpserve.New(n.rt, mcpserve.Config{Name: "weft-demo", Version: "dev", Agent: cfg})
	if err != nil {
		return fmt.Errorf("mcp serve: %w", err)
	}
	fmt.Fprintf(stderr, "weft mcp serve: node %s (credentials %s), data %s\n", n.url, n.credsDir, n.dataDir)
	fmt.Fprintf(stderr, "weft mcp serve: approve pending calls with: weft approvals --nats %s --creds-dir %s\n", n.url, n.credsDir)
	if o.http == "" {
		fmt.Fprintln(stderr, "weft mcp serve: serving MCP on standard input and output")
		err := srv.ServeStdio(ctx)
		if ctx.Err() != nil || errors.Is(err, io.EOF) {
			return nil
		}
		return err
	}
	ln, err := net.Listen("tcp", o.http)
	if err != nil {
		return fmt.Errorf("mcp serve: --http %s: %w", o.http, err)
	}
	hs := &http.Server{Handler: srv.Handler(token), ReadHeaderTimeout: 10 * time.Second}
	auth := "no token (loopback only)"
	if token != "" {
		auth = "bearer token from $" + o.tokenEnv
	}
	fmt.Fprintf(stderr, "weft mcp serve: serving MCP on http://%s/ (%s)\n", ln.Addr(), auth)
	done := make(chan error, 1)
	go func() { done <- hs.Serve(ln) }()
	select {
	case err := <-done:
		return fmt.Errorf("mcp serve: %w", err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if err := hs.Shutdown(sctx); err != nil {
		return fmt.Errorf("mcp serve: stop HTTP: %w", err)
	}
	<-done
	return nil
}
