package mcp_test

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/weft-run/weft/toolsets/mcp"
)

// envRequire set to "require" turns missing reference servers (node, or
// the npm packages in testdata/npm) into a failure instead of a skip; CI
// sets it.
const envRequire = "WEFT_MCP_SERVERS"

// npmDir holds the reference servers' package.json and node_modules.
var npmDir = filepath.Join("testdata", "npm")

// refServer returns node and the entry script of the npm package pkg, or
// skips (fails with WEFT_MCP_SERVERS=require) when they are missing.
func refServer(t *testing.T, pkg string) (node, script string) {
	t.Helper()
	missing := func(what string) {
		t.Helper()
		msg := what + ": install Node.js 20+ and run `npm install --no-save --no-package-lock` in toolsets/mcp/testdata/npm"
		if os.Getenv(envRequire) == "require" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		missing("no node on PATH")
	}
	script, err = filepath.Abs(filepath.Join(npmDir, "node_modules", "@modelcontextprotocol", pkg, "dist", "index.js"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(script); err != nil {
		missing("the npm package @modelcontextprotocol/" + pkg + " is not installed")
	}
	return node, script
}

// everythingStdio is the configuration of server-everything on stdio.
func everythingStdio(t *testing.T) mcp.Config {
	node, script := refServer(t, "server-everything")
	return mcp.Config{Name: "everything", Transport: mcp.Stdio(node, script, "stdio")}
}

// everythingHTTP starts server-everything in mode (streamableHttp or sse)
// on a free local port and returns its base URL; it is killed at cleanup.
func everythingHTTP(t *testing.T, mode string) string {
	t.Helper()
	node, script := refServer(t, "server-everything")
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	_ = l.Close()
	cmd := exec.Command(node, script, mode)
	cmd.Env = append(os.Environ(), fmt.Sprintf("PORT=%d", port))
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	eventually(t, "server-everything to listen on "+addr, func() bool {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			_ = c.Close()
		}
		return err == nil
	})
	return "http://" + addr
}
