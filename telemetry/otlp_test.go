package telemetry_test

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/weft-run/weft"
	"github.com/weft-run/weft/events/memstore"
	"github.com/weft-run/weft/llm"
	"github.com/weft-run/weft/telemetry"
)

// TestFromEnv: without OTEL_EXPORTER_OTLP_* nothing is added; with the
// endpoint set, spans and metrics reach a collector over OTLP/HTTP.
func TestFromEnv(t *testing.T) {
	for _, v := range []string{"OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT"} {
		t.Setenv(v, "")
	}
	var cfg telemetry.Config
	if tr, m, err := telemetry.FromEnv(t.Context(), &cfg); err != nil || tr || m || len(cfg.SpanExporters)+len(cfg.MetricReaders) != 0 {
		t.Fatalf("FromEnv without variables = %v %v %v, %+v", tr, m, err, cfg)
	}
	var mu sync.Mutex
	paths := map[string]int{}
	collector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		paths[r.URL.Path]++
		mu.Unlock()
		w.WriteHeader(http.StatusOK)
	}))
	defer collector.Close()
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", collector.URL)
	if tr, m, err := telemetry.FromEnv(t.Context(), &cfg); err != nil || !tr || !m {
		t.Fatalf("FromEnv = %v %v %v", tr, m, err)
	}
	var logs bytes.Buffer
	tel, err := telemetry.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	store := memstore.New()
	logger := slog.New(tel.LogHandler(slog.NewJSONHandler(&logs, nil)))
	rt, err := weft.Start(t.Context(), weft.Config{Store: store, Observer: tel})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	asked, release := make(chan struct{}), make(chan struct{})
	model := llm.Func(func(context.Context, *llm.Request) (*llm.Response, error) {
		close(asked)
		<-release
		return &llm.Response{Text: "hi"}, nil
	})
	s := agent(t, rt, "exported", weft.AgentConfig{Model: model}).NewSession()
	runID, err := s.Start(t.Context(), "go")
	if err != nil {
		t.Fatal(err)
	}
	<-asked
	logger.Info("a line of the run", "session", s.ID())
	close(release)
	if res, err := s.Wait(t.Context(), runID); err != nil || res.Status != weft.StatusCompleted {
		t.Fatalf("Wait = %+v, %v", res, err)
	}
	if err := tel.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if paths["/v1/traces"] == 0 || paths["/v1/metrics"] == 0 {
		t.Errorf("the collector got %v, want /v1/traces and /v1/metrics", paths)
	}
	if !strings.Contains(logs.String(), `"trace_id":"`) || !strings.Contains(logs.String(), `"span_id":"`) {
		t.Errorf("log line %s has no trace_id and span_id", logs.String())
	}
}

// TestFromEnvRefusals: OTEL_SDK_DISABLED=true adds nothing, and a gRPC
// protocol (the exporters speak HTTP) is an error naming the variable.
func TestFromEnvRefusals(t *testing.T) {
	for _, v := range []string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT", "OTEL_SDK_DISABLED",
		"OTEL_EXPORTER_OTLP_PROTOCOL", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_METRICS_PROTOCOL"} {
		t.Setenv(v, "")
	}
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:1")
	tests := []struct {
		name, env, value string
		err              string // "" for none; then nothing is added
	}{
		{"disabled", "OTEL_SDK_DISABLED", "true", ""},
		{"grpc", "OTEL_EXPORTER_OTLP_PROTOCOL", "grpc", "OTEL_EXPORTER_OTLP_PROTOCOL=grpc"},
		{"grpc traces", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "grpc", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL=grpc"},
		{"grpc metrics", "OTEL_EXPORTER_OTLP_METRICS_PROTOCOL", "grpc", "OTEL_EXPORTER_OTLP_METRICS_PROTOCOL=grpc"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv(tc.env, tc.value)
			var cfg telemetry.Config
			tr, m, err := telemetry.FromEnv(t.Context(), &cfg)
			if tc.err == "" && (err != nil || tr || m || len(cfg.SpanExporters)+len(cfg.MetricReaders) != 0) {
				t.Errorf("FromEnv = %v %v %v, %+v; want nothing added", tr, m, err, cfg)
			}
			if tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)) {
				t.Errorf("FromEnv = %v, want an error naming %s", err, tc.err)
			}
		})
	}
}
