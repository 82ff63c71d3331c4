package mcp_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/weft-run/weft/toolsets"
	"github.com/weft-run/weft/toolsets/mcp"
)

// The reference server on each transport: listing, a call, annotations.
func TestEverythingTransports(t *testing.T) {
	tests := []struct {
		name string
		cfg  func(t *testing.T) mcp.Config
	}{
		{name: "stdio", cfg: everythingStdio},
		{name: "streamable http", cfg: func(t *testing.T) mcp.Config {
			return mcp.Config{Name: "everything", Transport: mcp.StreamableHTTP(everythingHTTP(t, "streamableHttp") + "/mcp")}
		}},
		{name: "legacy sse", cfg: func(t *testing.T) mcp.Config {
			return mcp.Config{Name: "everything", Transport: mcp.SSE(everythingHTTP(t, "sse") + "/sse")}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := tt.cfg(t)
			c.ToolPrefix = "ev"
			h := start(t, newLive(t, c))
			h.mustReady()
			for _, n := range []string{"ev_echo", "ev_get-sum", "ev_trigger-long-running-operation"} {
				if !slices.Contains(h.names(), n) {
					t.Errorf("no %s in %v", n, h.names())
				}
			}
			if d := h.def("ev_get-sum"); !d.ConcurrentSafe || toolsets.GatingOf(d).Approval {
				t.Errorf("get-sum (readOnly) = concurrent %v, approval %v", d.ConcurrentSafe, toolsets.GatingOf(d).Approval)
			}
			if r := h.call(t.Context(), "s", "ev_get-sum", `{"a":2,"b":3}`, false); r.Kind != toolsets.KindSuccess || !strings.Contains(content(r), "is 5") {
				t.Errorf("get-sum = %s %s", r.Kind, r.Content)
			}
			if r := h.call(t.Context(), "e", "ev_echo", `{"message":"hello"}`, false); !strings.Contains(content(r), "hello") {
				t.Errorf("echo = %s %s", r.Kind, r.Content)
			}
		})
	}
}

func TestEverythingProgressAndCancellation(t *testing.T) {
	h := start(t, newLive(t, everythingStdio(t)))
	h.mustReady()
	r := h.call(t.Context(), "p", "trigger-long-running-operation", `{"duration":0.3,"steps":3}`, false)
	if r.Kind != toolsets.KindSuccess {
		t.Fatalf("long running = %s %s", r.Kind, r.Content)
	}
	var got []float64
	for _, p := range h.progressOf("p") {
		var d mcp.ProgressData
		_ = json.Unmarshal(p.Data, &d)
		got = append(got, d.Progress)
	}
	// Notifications race the result on the SDK's goroutines: the last
	// ones may be lost, never reordered.
	if len(got) == 0 || !slices.Equal(got, []float64{1, 2, 3}[:len(got)]) {
		t.Errorf("progress = %v", got)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan toolsets.Return, 1)
	go func() {
		done <- h.call(ctx, "c", "trigger-long-running-operation", `{"duration":60,"steps":60}`, false)
	}()
	eventually(t, "the first progress", func() bool { return len(h.progressOf("c")) > 0 })
	cancel()
	if r := <-done; r.Kind != toolsets.KindCancelled {
		t.Errorf("cancelled long running = %s %s", r.Kind, r.Content)
	}
}

// The environment given in the configuration reaches the server, and
// weft's own environment does not (beyond InheritedEnv).
func TestEverythingEnvironment(t *testing.T) {
	t.Setenv("WEFT_TEST_MCP_TOKEN", secret)
	t.Setenv("WEFT_TEST_MCP_NOT_PASSED", "private-value-1234")
	c := everythingStdio(t)
	c.Transport = c.Transport.WithEnv("API_TOKEN", mcp.FromEnv("WEFT_TEST_MCP_TOKEN"))
	h := start(t, newLive(t, c))
	h.mustReady()
	r := h.call(t.Context(), "g", "get-env", `{}`, false)
	if !strings.Contains(content(r), `"API_TOKEN": "`+secret+`"`) {
		t.Errorf("the server did not get API_TOKEN: %s", r.Content)
	}
	if strings.Contains(content(r), "private-value-1234") {
		t.Error("the server inherited a variable that was not given")
	}
}

// The reference server killed under a call of an idempotent tool: weft
// reconnects and sends the call again.
func TestEverythingKilledMidCall(t *testing.T) {
	ts := newLive(t, everythingStdio(t))
	h := start(t, ts)
	h.mustReady()
	done := make(chan toolsets.Return, 1)
	go func() {
		done <- h.call(t.Context(), "k", "trigger-long-running-operation", `{"duration":1,"steps":10}`, false)
	}()
	eventually(t, "the first progress", func() bool { return len(h.progressOf("k")) > 0 })
	pid := mcp.ServerPID(ts, h.RunID())
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	r := <-done
	if r.Kind != toolsets.KindSuccess || r.Attempts != 2 {
		t.Errorf("after the kill = %s %s (attempts %d)", r.Kind, r.Content, r.Attempts)
	}
	if mcp.ServerPID(ts, h.RunID()) == pid {
		t.Error("no new server process")
	}
}

// server-filesystem: reads are concurrency-safe, writes need approval.
func TestFilesystemServer(t *testing.T) {
	node, script := refServer(t, "server-filesystem")
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("weft was here\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	h := start(t, newLive(t, mcp.Config{Name: "fs", Transport: mcp.Stdio(node, script, dir)}))
	h.mustReady()
	read := h.def("read_text_file")
	if !read.ConcurrentSafe || toolsets.GatingOf(read).Approval {
		t.Errorf("read_text_file: concurrent %v approval %v", read.ConcurrentSafe, toolsets.GatingOf(read).Approval)
	}
	write := h.def("write_file")
	if write.ConcurrentSafe || !toolsets.GatingOf(write).Approval {
		t.Errorf("write_file: concurrent %v approval %v", write.ConcurrentSafe, toolsets.GatingOf(write).Approval)
	}
	path, _ := json.Marshal(filepath.Join(dir, "notes.txt"))
	if r := h.call(t.Context(), "r", "read_text_file", `{"path":`+string(path)+`}`, false); !strings.Contains(content(r), "weft was here") {
		t.Errorf("read = %s %s", r.Kind, r.Content)
	}
	out, _ := json.Marshal(filepath.Join(dir, "out.txt"))
	args := `{"path":` + string(out) + `,"content":"hi"}`
	if r := h.call(t.Context(), "w", "write_file", args, false); r.Kind != toolsets.KindApprovalRequired {
		t.Errorf("unapproved write = %s %s", r.Kind, r.Content)
	}
	if _, err := os.Stat(filepath.Join(dir, "out.txt")); err == nil {
		t.Fatal("the write ran without approval")
	}
	if r := h.call(t.Context(), "w", "write_file", args, true); r.Kind != toolsets.KindSuccess {
		t.Errorf("approved write = %s %s", r.Kind, r.Content)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "out.txt")); string(b) != "hi" {
		t.Errorf("out.txt = %q", b)
	}
}
