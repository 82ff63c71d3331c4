package weft_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/weft-run/weft/telemetry"
)

// BenchmarkTelemetry is the cost of tracing on W1 (one run, one tool call,
// in memory, new session): telemetry off (no observer), on without an
// exporter (spans built, then dropped), and on with an OTLP/HTTP exporter
// (batched) sending to a local collector that discards them.
//
//	go test -run '^$' -bench BenchmarkTelemetry -benchtime=300x .
func BenchmarkTelemetry(b *testing.B) {
	collector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
	}))
	defer collector.Close()
	for _, tc := range []struct {
		name string
		tel  func(b *testing.B) *telemetry.Telemetry
	}{
		{"off", func(*testing.B) *telemetry.Telemetry { return nil }},
		{"on-no-exporter", func(b *testing.B) *telemetry.Telemetry { return newBenchTelemetry(b, telemetry.Config{}) }},
		{"on-otlp-exporter", func(b *testing.B) *telemetry.Telemetry {
			exp, err := otlptracehttp.New(context.Background(), otlptracehttp.WithEndpointURL(collector.URL+"/v1/traces"))
			if err != nil {
				b.Fatal(err)
			}
			return newBenchTelemetry(b, telemetry.Config{SpanExporters: []sdktrace.SpanExporter{exp}})
		}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			cfg := memoryConfig(b)
			if tel := tc.tel(b); tel != nil {
				cfg.Observer = tel
				tel.SetStore(cfg.Store)
			}
			benchRuns(b, cfg, w1, false)
		})
	}
}

func newBenchTelemetry(b *testing.B, cfg telemetry.Config) *telemetry.Telemetry {
	b.Helper()
	tel, err := telemetry.New(cfg)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = tel.Shutdown(context.Background()) })
	return tel
}
