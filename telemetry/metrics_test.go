package telemetry_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"

	"github.com/weft-run/weft"
	"github.com/weft-run/weft/llm"
	"github.com/weft-run/weft/telemetry"
	"github.com/weft-run/weft/toolsets"
	"github.com/weft-run/weft/worker"
)

// TestMetricsEndpoint runs a tool run, an approval (pending, then
// decided) and a remote call, scrapes the handler and parses the text
// with the Prometheus parser: each family has its name, type and labels.
func TestMetricsEndpoint(t *testing.T) {
	rt, tel, _ := setup(t, telemetry.Config{})
	ok := func(context.Context, *toolsets.ToolContext, struct{}) (any, error) { return "ok", nil }
	deploy := newTool(t, "deploy", func(_ context.Context, tc *toolsets.ToolContext, _ struct{}) (any, error) {
		if tc.Approval == nil {
			return nil, toolsets.ApprovalRequired("deploy production", nil)
		}
		return "deployed", nil
	})
	w, err := worker.New(rt.Conn(), []toolsets.Tool{newTool(t, "lookup", ok)})
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- w.Serve(ctx) }()
	defer func() { stop(); <-done }()
	remote, err := rt.RemoteTools(t.Context(), "lookup")
	if err != nil {
		t.Fatal(err)
	}
	model := llm.NewScripted(llm.ScriptToolCalls(call("c1", "lookup", `{}`), call("c2", "deploy", `{}`)), llm.ScriptText("done"))
	s := agent(t, rt, "metered", weft.AgentConfig{Model: model, Tools: []toolsets.Tool{deploy}, Toolsets: []toolsets.Toolset{remote}}).NewSession()
	run(t, s, weft.StatusWaiting)

	scrape := func() map[string]string {
		t.Helper()
		out := map[string]string{}
		for name, f := range scrapeMetrics(t, tel.Handler()) {
			var series []string
			for _, m := range f.Metric {
				var ls []string
				for _, l := range m.Label {
					ls = append(ls, l.GetName()+"="+l.GetValue())
				}
				sort.Strings(ls)
				v := m.GetCounter().GetValue() + m.GetGauge().GetValue() + float64(m.GetHistogram().GetSampleCount())
				series = append(series, "{"+strings.Join(ls, ",")+"} "+strings.TrimRight(strings.TrimRight(strconvF(v), "0"), "."))
			}
			sort.Strings(series)
			out[name] = f.GetType().String() + " " + strings.Join(series, " ")
		}
		return out
	}
	got := scrape()
	want := map[string]string{
		"gen_ai_client_operation_duration_seconds": "HISTOGRAM {gen_ai_agent_name=metered,gen_ai_operation_name=invoke_agent} 1 {gen_ai_operation_name=chat,gen_ai_request_model=scripted} 1",
		"gen_ai_client_token_usage":                "HISTOGRAM {gen_ai_operation_name=chat,gen_ai_request_model=scripted,gen_ai_token_type=input} 1 {gen_ai_operation_name=chat,gen_ai_request_model=scripted,gen_ai_token_type=output} 1",
		"weft_tool_calls_total":                    "COUNTER {gen_ai_tool_name=deploy,weft_outcome=ok,weft_tool_kind=local} 1 {gen_ai_tool_name=lookup,weft_outcome=ok,weft_tool_kind=remote} 1",
		"weft_tool_duration_seconds":               "HISTOGRAM {gen_ai_tool_name=deploy,weft_tool_kind=local} 1 {gen_ai_tool_name=lookup,weft_tool_kind=remote} 1",
		"weft_runs_total":                          "COUNTER {gen_ai_agent_name=metered,weft_outcome=waiting} 1",
		"weft_hitl_pending":                        "GAUGE {weft_hitl_kind=approval} 1",
		"weft_worker_deliveries_total":             "COUNTER {weft_redelivery=false} 1",
	}
	for name, w := range want {
		if got[name] != w {
			t.Errorf("%s:\n got %s\nwant %s", name, got[name], w)
		}
	}
	for _, name := range []string{"weft_events_append_duration_seconds", "weft_hitl_oldest_age_seconds"} {
		if !strings.Contains(got[name], "weft_") {
			t.Errorf("%s: %q, want series", name, got[name])
		}
	}
	if res, err := s.Resume(t.Context(), weft.Approve("c2", "ana", nil)); err != nil || res.Status != weft.StatusCompleted {
		t.Fatalf("Resume = %+v, %v", res, err)
	}
	got = scrape()
	for name, w := range map[string]string{
		"weft_hitl_pending":               "GAUGE {weft_hitl_kind=approval} 0",
		"weft_hitl_wait_duration_seconds": "HISTOGRAM {weft_hitl_kind=approval} 1",
		"weft_runs_total":                 "COUNTER {gen_ai_agent_name=metered,weft_outcome=completed} 1 {gen_ai_agent_name=metered,weft_outcome=waiting} 1",
	} {
		if got[name] != w {
			t.Errorf("after the decision, %s:\n got %s\nwant %s", name, got[name], w)
		}
	}
}

func strconvF(v float64) string { return strconv.FormatFloat(v, 'f', 3, 64) }

// scrapeMetrics gets the metrics h serves and parses them with the
// Prometheus text parser.
func scrapeMetrics(t *testing.T, h http.Handler) map[string]*dto.MetricFamily {
	t.Helper()
	srv := httptest.NewServer(h)
	defer srv.Close()
	resp, err := http.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	fams, err := (&expfmt.TextParser{}).TextToMetricFamilies(bytes.NewReader(body))
	if err != nil {
		t.Fatalf("parse /metrics: %v\n%s", err, body)
	}
	return fams
}

// TestHITLGaugeAfterCancel: a cancelled run's undecided approval leaves
// the pending gauge.
func TestHITLGaugeAfterCancel(t *testing.T) {
	rt, tel, _ := setup(t, telemetry.Config{})
	deploy := newTool(t, "deploy", func(_ context.Context, tc *toolsets.ToolContext, _ struct{}) (any, error) {
		return nil, toolsets.ApprovalRequired("deploy production", nil)
	})
	model := llm.NewScripted(llm.ScriptToolCalls(call("c1", "deploy", `{}`)))
	s := agent(t, rt, "cancelled", weft.AgentConfig{Model: model, Tools: []toolsets.Tool{deploy}}).NewSession()
	res := run(t, s, weft.StatusWaiting)
	gauge := func() string {
		t.Helper()
		fams := scrapeMetrics(t, tel.Handler())
		if fams["weft_hitl_pending"] == nil {
			t.Fatal("no weft_hitl_pending in /metrics")
		}
		return strconvF(fams["weft_hitl_pending"].Metric[0].GetGauge().GetValue())
	}
	if g := gauge(); g != "1.000" {
		t.Fatalf("pending while waiting = %s", g)
	}
	if err := s.Cancel(t.Context(), res.RunID, "ana", "not today"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Wait(t.Context(), res.RunID); err != nil && !strings.Contains(err.Error(), "cancel") {
		t.Fatal(err)
	}
	// Wait may read the cancel from the log before the appending actor
	// has shown it to the observer.
	g := gauge()
	for deadline := time.Now().Add(5 * time.Second); g != "0.000" && time.Now().Before(deadline); g = gauge() {
		time.Sleep(5 * time.Millisecond)
	}
	if g != "0.000" {
		t.Errorf("pending after the cancel = %s, want 0", g)
	}
}
