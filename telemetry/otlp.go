package telemetry

import (
	"context"
	"fmt"
	"os"

	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
)

// FromEnv adds OTLP/HTTP exporters to cfg when the standard variables ask
// for them: spans when OTEL_EXPORTER_OTLP_ENDPOINT or
// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is set, metrics when
// OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_METRICS_ENDPOINT is
// set (the exporters read the other OTEL_EXPORTER_OTLP_* variables
// themselves: headers, timeout, TLS). With none set it adds nothing: no
// telemetry leaves the process. It reports what it added.
func FromEnv(ctx context.Context, cfg *Config) (traces, metrics bool, err error) {
	set := func(names ...string) bool {
		for _, n := range names {
			if os.Getenv(n) != "" {
				return true
			}
		}
		return false
	}
	if traces, err = TracesFromEnv(ctx, cfg); err != nil {
		return false, false, err
	}
	if set("OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT") {
		exp, err := otlpmetrichttp.New(ctx)
		if err != nil {
			return traces, false, fmt.Errorf("telemetry: the OTLP metric exporter: %w", err)
		}
		cfg.MetricReaders = append(cfg.MetricReaders, sdkmetric.NewPeriodicReader(exp))
		metrics = true
	}
	return traces, metrics, nil
}

// TracesFromEnv is FromEnv for spans only (a remote worker's process).
func TracesFromEnv(ctx context.Context, cfg *Config) (bool, error) {
	if os.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT") == "" && os.Getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") == "" {
		return false, nil
	}
	exp, err := otlptracehttp.New(ctx)
	if err != nil {
		return false, fmt.Errorf("telemetry: the OTLP span exporter: %w", err)
	}
	cfg.SpanExporters = append(cfg.SpanExporters, exp)
	return true, nil
}
