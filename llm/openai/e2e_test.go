package openai_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/weft-run/weft"
	"github.com/weft-run/weft/events"
	"github.com/weft-run/weft/llm"
	"github.com/weft-run/weft/llm/openai"
	"github.com/weft-run/weft/toolsets"
)

// compatEnv set to "require" makes the end-to-end test fail, not skip,
// when node or the npm package is missing (.ci/run sets it).
const compatEnv = "WEFT_OPENAI_COMPAT"

// mockLLM starts @dwmkerr/mock-llm, an OpenAI-compatible server from npm
// (installed by .ci/run into testdata/mockllm), on a free local port with
// the rules of testdata/mockllm/mock-llm.yaml, and returns its /v1 URL.
func mockLLM(t *testing.T) string {
	t.Helper()
	missing := func(what string) {
		t.Helper()
		msg := what + ": run `npm install` in llm/openai/testdata/mockllm (as .ci/run does)"
		if os.Getenv(compatEnv) == "require" {
			t.Fatal(msg)
		}
		t.Skip(msg + "; set " + compatEnv + "=require to fail instead of skipping")
	}
	node, err := exec.LookPath("node")
	if err != nil {
		missing("node is not on PATH")
	}
	dir, _ := filepath.Abs(filepath.Join("testdata", "mockllm"))
	main := filepath.Join(dir, "node_modules", "@dwmkerr", "mock-llm", "dist", "main.js")
	if _, err := os.Stat(main); err != nil {
		missing("@dwmkerr/mock-llm is not installed")
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	_ = l.Close()
	var out strings.Builder
	cmd := exec.Command(node, main, "--config", filepath.Join(dir, "mock-llm.yaml"))
	cmd.Env = append(os.Environ(), "HOST=127.0.0.1", fmt.Sprintf("PORT=%d", port))
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-exited
	})
	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	deadline := time.Now().Add(30 * time.Second) // a bound on a hang, not a measurement
	for {
		resp, err := http.Get(base + "/health")
		if err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return base + "/v1"
			}
		}
		select {
		case err := <-exited:
			t.Fatalf("mock-llm exited: %v\n%s", err, out.String())
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("mock-llm did not come up on %s\n%s", base, out.String())
		}
	}
}

type serviceArgs struct {
	Service string `json:"service"`
}

type deployArgs struct {
	Service string `json:"service"`
	Version string `json:"version"`
}

// An agent with two tools, one of them behind an approval, runs on the
// embedded default against a real OpenAI-compatible server process.
func TestEndToEndCompatibleServer(t *testing.T) {
	base := mockLLM(t)
	model, err := openai.New("gpt-e2e", openai.WithBaseURL(base), openai.WithProviderName("mock-llm"),
		// mock-llm streams text only, not tool calls: the run asks it
		// without streaming (the stream is checked on its own below).
		openai.WithoutStreaming())
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	rt, err := weft.Start(ctx, weft.Config{DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rt.Close() })
	status, err := toolsets.NewFunc("service_status", func(_ context.Context, a serviceArgs) (string, error) {
		return a.Service + "-green", nil
	}, toolsets.WithDescription("Reports a service's health."), toolsets.WithStrict(true))
	if err != nil {
		t.Fatal(err)
	}
	deployed := 0
	deploy, err := toolsets.NewFunc("deploy", func(_ context.Context, a deployArgs) (string, error) {
		deployed++
		return "shipped-" + a.Service + "-" + a.Version, nil
	}, toolsets.WithDescription("Deploys a version of a service."))
	if err != nil {
		t.Fatal(err)
	}
	agent, err := rt.NewAgent("deployer", weft.AgentConfig{
		Model: model, Tools: []toolsets.Tool{status, deploy},
		Instructions:          []string{"You deploy services."},
		ApprovalRequiredTools: []string{"deploy"},
	})
	if err != nil {
		t.Fatal(err)
	}
	sess := agent.NewSession()
	waiting, err := sess.Run(ctx, "ship api 1.2.3")
	if err != nil {
		t.Fatal(err)
	}
	if waiting.Status != weft.StatusWaiting || len(waiting.Pending.Approvals) != 1 || waiting.Pending.Approvals[0].ID != "call_deploy" {
		t.Fatalf("first run = %+v", waiting)
	}
	if deployed != 0 {
		t.Fatal("deploy ran before its approval")
	}
	res, err := sess.Resume(ctx, weft.Approve("call_deploy", "e2e", nil))
	if err != nil {
		t.Fatal(err)
	}
	want := "status=api-green deploy=shipped-api-1.2.3 tools=2 system=You deploy services."
	if res.Status != weft.StatusCompleted || res.Output != want {
		t.Fatalf("resumed run = %s %q, want completed %q", res.Status, res.Output, want)
	}
	if deployed != 1 {
		t.Errorf("deploy ran %d times", deployed)
	}

	evs, err := sess.Events(ctx, res.RunID)
	if err != nil {
		t.Fatal(err)
	}
	var models []string
	var counts = map[events.Type]int{}
	for _, ev := range evs {
		counts[ev.Type]++
		switch ev.Type {
		case events.TypeModelRequest:
			d, err := events.DecodeAs[events.ModelRequest](ev)
			if err != nil {
				t.Fatal(err)
			}
			models = append(models, "request "+d.Model)
		case events.TypeModelResponse:
			d, err := events.DecodeAs[events.ModelResponse](ev)
			if err != nil {
				t.Fatal(err)
			}
			models = append(models, "response "+d.Model)
		}
	}
	wantModels := []string{"request mock-llm:gpt-e2e", "response mock-llm:gpt-e2e", "request mock-llm:gpt-e2e", "response mock-llm:gpt-e2e"}
	if fmt.Sprint(models) != fmt.Sprint(wantModels) {
		t.Errorf("models recorded = %q, want %q", models, wantModels)
	}
	for typ, n := range map[events.Type]int{events.TypeApprovalRequested: 1, events.TypeApprovalDecided: 1, events.TypeToolRequested: 2, events.TypeRunCompleted: 1} {
		if counts[typ] != n {
			t.Errorf("%d %s events, want %d (all: %v)", counts[typ], typ, n, counts)
		}
	}

	t.Run("stream", func(t *testing.T) {
		streamer, err := openai.New("gpt-e2e", openai.WithBaseURL(base), openai.WithProviderName("mock-llm"))
		if err != nil {
			t.Fatal(err)
		}
		var deltas []string
		var final *llm.Response
		for ev, err := range streamer.Stream(ctx, &llm.Request{Messages: []llm.Message{llm.UserMessage("stream check")}}) {
			if err != nil {
				t.Fatal(err)
			}
			if ev.TextDelta != "" {
				deltas = append(deltas, ev.TextDelta)
			}
			if ev.Response != nil {
				final = ev.Response
			}
		}
		const text = "streamed through a server nobody here wrote"
		if final == nil || final.Text != text || strings.Join(deltas, "") != text || len(deltas) < 2 {
			t.Errorf("deltas %q, final %+v", deltas, final)
		}
		if final != nil && (final.Model != "mock-llm:gpt-e2e" || final.FinishReason != llm.FinishStop) {
			t.Errorf("final = %+v", final)
		}
	})

	t.Run("server error", func(t *testing.T) {
		wrong, err := openai.New("gpt-e2e", openai.WithBaseURL(strings.TrimSuffix(base, "/v1")+"/nowhere"))
		if err != nil {
			t.Fatal(err)
		}
		_, err = wrong.Request(ctx, &llm.Request{Messages: []llm.Message{llm.UserMessage("hi")}})
		me, ok := errors.AsType[*llm.ModelError](err)
		if !ok || me.StatusCode != http.StatusNotFound || me.Retryable {
			t.Errorf("err = %v", err)
		}
	})
}
