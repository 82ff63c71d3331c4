package telemetry

import (
	"context"
	"fmt"
	"os"
	"strings"

	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
)

// FromEnv adds OTLP/HTTP exporters to cfg when the standard variables ask
// for them: spans when OTEL_EXPORTER_OTLP_ENDPOINT or
// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is set, metrics when
// OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_METRICS_ENDPOINT is
// set (the exporters read the other OTEL_EXPORTER_OTLP_* variables
// themselves: headers, timeout, TLS). With none set, or with
// OTEL_SDK_DISABLED=true, it adds nothing: no telemetry leaves the
// process. The exporters speak HTTP: a signal whose protocol
// (OTEL_EXPORTER_OTLP_PROTOCOL, or the signal's own
// OTEL_EXPORTER_OTLP_{TRACES,METRICS}_PROTOCOL) is grpc is an error. It
// reports what it added.
func FromEnv(ctx context.Context, cfg *Config) (traces, metrics bool, err error) {
	if traces, err = TracesFromEnv(ctx, cfg); err != nil {
		return false, false, err
	}
	if !exporting("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT") {
		return traces, false, nil
	}
	if err := httpProtocol("OTEL_EXPORTER_OTLP_METRICS_PROTOCOL"); err != nil {
		return traces, false, err
	}
	exp, err := otlpmetrichttp.New(ctx)
	if err != nil {
		return traces, false, fmt.Errorf("telemetry: the OTLP metric exporter: %w", err)
	}
	cfg.MetricReaders = append(cfg.MetricReaders, sdkmetric.NewPeriodicReader(exp))
	return traces, true, nil
}

// TracesFromEnv is FromEnv for spans only (a remote worker's process).
func TracesFromEnv(ctx context.Context, cfg *Config) (bool, error) {
	if !exporting("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") {
		return false, nil
	}
	if err := httpProtocol("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"); err != nil {
		return false, err
	}
	exp, err := otlptracehttp.New(ctx)
	if err != nil {
		return false, fmt.Errorf("telemetry: the OTLP span exporter: %w", err)
	}
	cfg.SpanExporters = append(cfg.SpanExporters, exp)
	return true, nil
}

// exporting says whether a signal is to be exported: the SDK is not
// disabled and its endpoint variable or the general one is set.
func exporting(endpoint string) bool {
	if strings.EqualFold(strings.TrimSpace(os.Getenv("OTEL_SDK_DISABLED")), "true") {
		return false
	}
	return set("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint)
}

// set says whether any of the variables names is set (not empty).
func set(names ...string) bool {
	for _, n := range names {
		if os.Getenv(n) != "" {
			return true
		}
	}
	return false
}

// httpProtocol refuses a signal's OTLP protocol of grpc (the signal's
// variable, else OTEL_EXPORTER_OTLP_PROTOCOL): the exporters speak HTTP
// and would silently post to a gRPC port.
func httpProtocol(signal string) error {
	name := signal
	if os.Getenv(name) == "" {
		name = "OTEL_EXPORTER_OTLP_PROTOCOL"
	}
	if p := strings.TrimSpace(os.Getenv(name)); strings.EqualFold(p, "grpc") {
		return fmt.Errorf("telemetry: %s=%s: the OTLP exporters speak HTTP (http/protobuf); point them at the collector's HTTP port (4318) and leave the protocol unset", name, p)
	}
	return nil
}
