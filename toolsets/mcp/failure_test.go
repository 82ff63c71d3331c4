package mcp_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/weft-run/weft/toolsets"
	"github.com/weft-run/weft/toolsets/mcp"
)

// secret is a credential the tests put in the environment; it must never
// show in a report, an error or a return.
const secret = "s3cr3t-weft-token-4711"

// A server that fails to start, or never answers initialize, makes the
// toolset unavailable (or fails the run, under FailWhenUnavailable); the
// report carries the server's stderr tail without the secrets it printed.
func TestServerThatDoesNotStart(t *testing.T) {
	t.Setenv("WEFT_TEST_MCP_TOKEN", secret)
	tests := []struct {
		name     string
		tr       mcp.Transport
		policy   toolsets.LifecyclePolicy
		contains []string
		failsRun bool
	}{
		{name: "exits at once", tr: mcp.Stdio("sh", "-c", `echo "boom: bad token $TOKEN" >&2; exit 3`).WithEnv("TOKEN", mcp.FromEnv("WEFT_TEST_MCP_TOKEN")),
			contains: []string{"did not start", "stderr: boom: bad token [redacted]"}},
		{name: "no such program", tr: mcp.Stdio("/nonexistent/mcp-server"), contains: []string{"did not start"}},
		{name: "never answers initialize", tr: mcp.Stdio("sleep", "30"), contains: []string{"did not answer initialize within 500ms"}},
		{name: "fails the run when the policy says so", tr: mcp.Stdio("sh", "-c", "exit 1"), policy: toolsets.LifecyclePolicy{FailWhenUnavailable: true},
			contains: []string{"did not start"}, failsRun: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := start(t, newLive(t, mcp.Config{Name: "broken", Transport: tt.tr, RequestTimeout: 500 * time.Millisecond, Lifecycle: tt.policy}))
			if h.Report.State != toolsets.StateUnavailable {
				t.Fatalf("report = %+v", h.Report)
			}
			if (h.Err != nil) != tt.failsRun || (h.Err != nil && !errors.Is(h.Err, toolsets.ErrUnavailable)) {
				t.Errorf("err = %v, fails run %v", h.Err, tt.failsRun)
			}
			for _, s := range tt.contains {
				if !strings.Contains(h.Report.Message, s) {
					t.Errorf("message %q lacks %q", h.Report.Message, s)
				}
			}
			if strings.Contains(h.Report.Message, secret) {
				t.Errorf("the secret is in the report: %q", h.Report.Message)
			}
		})
	}
}

// Header values come from the environment, reach the server, and never
// show in an error even when the server echoes them back.
func TestHeadersFromEnvironmentStayOutOfErrors(t *testing.T) {
	t.Setenv("WEFT_TEST_MCP_TOKEN", secret)
	var mu sync.Mutex
	var got []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got = append(got, r.Header.Get("Authorization"))
		mu.Unlock()
		http.Error(w, "rejected credentials: "+r.Header.Get("Authorization"), http.StatusInternalServerError)
	}))
	defer srv.Close()
	for _, tr := range []mcp.Transport{mcp.StreamableHTTP(srv.URL + "/mcp"), mcp.SSE(srv.URL + "/sse")} {
		t.Run(string(tr.Kind), func(t *testing.T) {
			h := start(t, newLive(t, mcp.Config{Name: "remote", Transport: tr, Headers: map[string]mcp.Value{"Authorization": mcp.Bearer("WEFT_TEST_MCP_TOKEN")}}))
			if h.Report.State != toolsets.StateUnavailable {
				t.Fatalf("report = %+v", h.Report)
			}
			if strings.Contains(h.Report.Message, secret) {
				t.Errorf("the secret is in the report: %q", h.Report.Message)
			}
		})
	}
	mu.Lock()
	defer mu.Unlock()
	if len(got) == 0 || got[0] != "Bearer "+secret {
		t.Errorf("the server got Authorization %q", got)
	}
}

// Over HTTP (streamable and legacy SSE, both served by the SDK) the
// headers reach the server, and a tool error that echoes them is scrubbed.
func TestHeadersScrubbedFromToolErrors(t *testing.T) {
	t.Setenv("WEFT_TEST_MCP_TOKEN", secret)
	var last atomic.Value // the Authorization header of the last request
	last.Store("")
	server := sdk.NewServer(&sdk.Implementation{Name: "http-test", Version: "1"}, nil)
	sdk.AddTool(server, &sdk.Tool{Name: "whoami", Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true}},
		func(_ context.Context, req *sdk.CallToolRequest, _ struct{}) (*sdk.CallToolResult, any, error) {
			r := text("you sent " + last.Load().(string))
			r.IsError = true
			return r, nil, nil
		})
	mux := http.NewServeMux()
	mux.Handle("/mcp", sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return server }, nil))
	mux.Handle("/sse", sdk.NewSSEHandler(func(*http.Request) *sdk.Server { return server }, nil))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		last.Store(r.Header.Get("Authorization"))
		mux.ServeHTTP(w, r)
	}))
	defer srv.Close()
	defer srv.CloseClientConnections()
	for _, tr := range []mcp.Transport{mcp.StreamableHTTP(srv.URL + "/mcp"), mcp.SSE(srv.URL + "/sse")} {
		t.Run(string(tr.Kind), func(t *testing.T) {
			ts := newLive(t, mcp.Config{Name: "remote", Transport: tr, Headers: map[string]mcp.Value{"Authorization": mcp.Bearer("WEFT_TEST_MCP_TOKEN")}})
			h := start(t, ts)
			h.mustReady()
			r := h.call(t.Context(), "w", "whoami", `{}`, false)
			if r.Kind != toolsets.KindExecution || content(r) != "you sent [redacted]" {
				t.Errorf("whoami = %s %s", r.Kind, r.Content)
			}
			_ = ts.Close()
		})
	}
}

// A credential in the URL's query is kept out of the messages too.
func TestURLQuerySecretStaysOutOfErrors(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	_ = l.Close() // nothing listens there now
	for _, tr := range []mcp.Transport{mcp.StreamableHTTP("http://" + addr + "/mcp?api_key=" + secret), mcp.SSE("http://" + addr + "/sse?api_key=" + secret)} {
		t.Run(string(tr.Kind), func(t *testing.T) {
			h := start(t, newLive(t, mcp.Config{Name: "remote", Transport: tr}))
			if h.Report.State != toolsets.StateUnavailable || !strings.Contains(h.Report.Message, "[redacted]") || strings.Contains(h.Report.Message, secret) {
				t.Errorf("report = %+v", h.Report)
			}
		})
	}
}

func TestUnsetEnvironmentValue(t *testing.T) {
	h := start(t, newLive(t, mcp.Config{Name: "remote", Transport: mcp.StreamableHTTP("http://127.0.0.1:1/mcp"),
		Headers: map[string]mcp.Value{"Authorization": mcp.Bearer("WEFT_TEST_MCP_UNSET_VARIABLE")}}))
	if h.Report.State != toolsets.StateUnavailable || !strings.Contains(h.Report.Message, "WEFT_TEST_MCP_UNSET_VARIABLE is not set") {
		t.Errorf("report = %+v", h.Report)
	}
}
