package main

import (
	"bufio"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// childEnv makes the test binary run as the weft command (TestMain).
const childEnv = "WEFT_CLI_CHILD"

// childCommand is the weft command line args as a process of its own: the
// test binary re-run (see TestMain).
func childCommand(t *testing.T, args ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), os.Args[0], args...)
	cmd.Env = append(os.Environ(), childEnv+"=1")
	return cmd
}

// lines collects what a process writes, line by line, and tells when a
// line matches.
type lines struct {
	mu  sync.Mutex
	all []string
	new chan struct{}
}

func collect(t *testing.T, r io.Reader) *lines {
	l := &lines{new: make(chan struct{}, 1)}
	go func() {
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			l.mu.Lock()
			l.all = append(l.all, sc.Text())
			l.mu.Unlock()
			select {
			case l.new <- struct{}{}:
			default:
			}
		}
	}()
	return l
}

// wait returns the submatches of the first line matching re.
func (l *lines) wait(t *testing.T, re *regexp.Regexp) []string {
	t.Helper()
	deadline := time.After(60 * time.Second)
	for {
		l.mu.Lock()
		for _, s := range l.all {
			if m := re.FindStringSubmatch(s); m != nil {
				l.mu.Unlock()
				return m
			}
		}
		text := strings.Join(l.all, "\n")
		l.mu.Unlock()
		select {
		case <-l.new:
		case <-deadline:
			t.Fatalf("no line matches %s in:\n%s", re, text)
		}
	}
}

var nodeLine = regexp.MustCompile(`weft mcp serve: node (\S+) \(credentials (\S+)\)`)

// weft mcp serve over stdio, driven by the official Go SDK's client from
// another process's side: the tools are listed, a call runs, and a call
// that needs an approval is pending until weft approve decides it on the
// node, after which the same call returns the tool's result.
func TestMCPServeStdio(t *testing.T) {
	cmd := childCommand(t, "mcp", "serve", "--listen", "127.0.0.1:-1", "--data", t.TempDir())
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	notes := collect(t, stderr)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(t.Context(), &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	tools, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range tools.Tools {
		names = append(names, tl.Name)
	}
	if strings.Join(names, ",") != "deploy,fetch_ticket,lookup" {
		t.Errorf("tools %v, want deploy, fetch_ticket, lookup", names)
	}
	args := map[string]any{"release": "v1.4.2", "environment": "production"}
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "deploy", Arguments: args})
	if err != nil {
		t.Fatal(err)
	}
	pending, _ := res.StructuredContent.(map[string]any)
	if !res.IsError || pending["status"] != "approval_pending" {
		t.Fatalf("deploy: %+v, want approval_pending", res)
	}
	m := notes.wait(t, nodeLine)
	out := mustCLI(t, "approve", pending["call_id"].(string), "--session", pending["session_id"].(string), "--by", "carol",
		"--nats", m[1], "--creds-dir", m[2])
	if !strings.Contains(out, "completed") {
		t.Errorf("weft approve: %s", out)
	}
	res, err = cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "deploy", Arguments: args})
	if err != nil {
		t.Fatal(err)
	}
	var ret map[string]any
	if res.IsError || len(res.Content) != 1 || json.Unmarshal([]byte(res.Content[0].(*mcp.TextContent).Text), &ret) != nil || ret["deployed"] != true {
		t.Fatalf("deploy after the approval: %+v", res)
	}
}

// An MCP client nobody here wrote, the MCP inspector's CLI (npm), lists
// and calls weft mcp serve's tools over stdio.
func TestMCPServeWithTheInspectorCLI(t *testing.T) {
	cli := filepath.Join("..", "..", "toolsets", "mcp", "testdata", "npm", "node_modules", "@modelcontextprotocol", "inspector-cli", "build")
	node, err := exec.LookPath("node")
	if _, serr := os.Stat(filepath.Join(cli, "index.js")); err != nil || serr != nil {
		if os.Getenv("WEFT_MCP_SERVERS") == "require" {
			t.Fatalf("WEFT_MCP_SERVERS=require but node (%v) or the inspector CLI (%v) is missing", err, serr)
		}
		t.Skip("needs node and the MCP inspector CLI: (cd toolsets/mcp/testdata/npm && npm install --no-save --no-package-lock)")
	}
	self, err := filepath.Abs(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	inspect := func(args ...string) map[string]any {
		t.Helper()
		all := append([]string{"index.js", self}, args...)
		all = append(all, "--", "mcp", "serve", "--listen", "127.0.0.1:-1", "--data", t.TempDir())
		cmd := exec.CommandContext(t.Context(), node, all...)
		cmd.Dir = cli // the CLI finds its package.json from the working directory
		cmd.Env = append(os.Environ(), childEnv+"=1")
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("inspector %v: %v\n%s", args, err, out)
		}
		var v map[string]any
		if err := json.Unmarshal(out, &v); err != nil {
			t.Fatalf("inspector %v printed no JSON: %v\n%s", args, err, out)
		}
		return v
	}
	listed := inspect("--method", "tools/list")
	if tools, _ := listed["tools"].([]any); len(tools) != 3 {
		t.Errorf("tools/list: %v, want 3 tools", listed)
	}
	called := inspect("--method", "tools/call", "--tool-name", "lookup", "--tool-arg", "ticket_id=T-7")
	if sc, _ := called["structuredContent"].(map[string]any); sc["ticket_id"] != "T-7" || called["isError"] == true {
		t.Errorf("tools/call lookup: %v", called)
	}
}
