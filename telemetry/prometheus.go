package telemetry

import (
	"math"
	"net/http"
	"slices"
	"strings"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"google.golang.org/protobuf/proto"
)

// Handler serves the metrics as Prometheus text (GET /metrics). Names
// follow the OpenTelemetry-to-Prometheus rules: dots become underscores,
// the unit is a suffix (s: _seconds), counters end in _total. The caller
// puts it behind whatever authentication the metrics need.
func (t *Telemetry) Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var rm metricdata.ResourceMetrics
		if err := t.prom.Collect(r.Context(), &rm); err != nil {
			http.Error(w, "collect the metrics: "+err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", string(expfmt.FmtText))
		enc := expfmt.NewEncoder(w, expfmt.FmtText)
		for _, mf := range families(rm) {
			if err := enc.Encode(mf); err != nil {
				return
			}
		}
	})
}

// PrometheusName is the Prometheus name of an OpenTelemetry metric.
func PrometheusName(name, unit string, counter bool) string {
	n := strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' {
			return r
		}
		return '_'
	}, name)
	switch unit {
	case "s":
		n += "_seconds"
	case "By":
		n += "_bytes"
	}
	if counter {
		n += "_total"
	}
	return n
}

func labelName(k attribute.Key) string {
	return PrometheusName(string(k), "", false)
}

func labels(set attribute.Set) []*dto.LabelPair {
	var out []*dto.LabelPair
	for _, kv := range set.ToSlice() {
		out = append(out, &dto.LabelPair{Name: proto.String(labelName(kv.Key)), Value: proto.String(kv.Value.String())})
	}
	return out
}

// families converts collected metrics to Prometheus families.
func families(rm metricdata.ResourceMetrics) []*dto.MetricFamily {
	var out []*dto.MetricFamily
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if mf := family(m); mf != nil && len(mf.Metric) > 0 {
				out = append(out, mf)
			}
		}
	}
	slices.SortFunc(out, func(a, b *dto.MetricFamily) int { return strings.Compare(a.GetName(), b.GetName()) })
	return out
}

func family(m metricdata.Metrics) *dto.MetricFamily {
	mf := &dto.MetricFamily{Help: proto.String(m.Description)}
	switch d := m.Data.(type) {
	case metricdata.Sum[int64]:
		return sum(mf, m, d.IsMonotonic, d.DataPoints)
	case metricdata.Sum[float64]:
		return sum(mf, m, d.IsMonotonic, d.DataPoints)
	case metricdata.Gauge[int64]:
		return gauge(mf, m, d.DataPoints)
	case metricdata.Gauge[float64]:
		return gauge(mf, m, d.DataPoints)
	case metricdata.Histogram[int64]:
		return histogram(mf, m, d.DataPoints)
	case metricdata.Histogram[float64]:
		return histogram(mf, m, d.DataPoints)
	}
	return nil
}

func sum[N int64 | float64](mf *dto.MetricFamily, m metricdata.Metrics, mono bool, dps []metricdata.DataPoint[N]) *dto.MetricFamily {
	if !mono {
		return gauge(mf, m, dps)
	}
	mf.Name, mf.Type = proto.String(PrometheusName(m.Name, m.Unit, true)), dto.MetricType_COUNTER.Enum()
	for _, dp := range dps {
		mf.Metric = append(mf.Metric, &dto.Metric{Label: labels(dp.Attributes), Counter: &dto.Counter{Value: proto.Float64(float64(dp.Value))}})
	}
	return mf
}

func gauge[N int64 | float64](mf *dto.MetricFamily, m metricdata.Metrics, dps []metricdata.DataPoint[N]) *dto.MetricFamily {
	mf.Name, mf.Type = proto.String(PrometheusName(m.Name, m.Unit, false)), dto.MetricType_GAUGE.Enum()
	for _, dp := range dps {
		mf.Metric = append(mf.Metric, &dto.Metric{Label: labels(dp.Attributes), Gauge: &dto.Gauge{Value: proto.Float64(float64(dp.Value))}})
	}
	return mf
}

func histogram[N int64 | float64](mf *dto.MetricFamily, m metricdata.Metrics, dps []metricdata.HistogramDataPoint[N]) *dto.MetricFamily {
	mf.Name, mf.Type = proto.String(PrometheusName(m.Name, m.Unit, false)), dto.MetricType_HISTOGRAM.Enum()
	for _, dp := range dps {
		h := &dto.Histogram{SampleCount: proto.Uint64(dp.Count), SampleSum: proto.Float64(float64(dp.Sum))}
		var cum uint64
		for i, b := range dp.Bounds {
			cum += dp.BucketCounts[i]
			h.Bucket = append(h.Bucket, &dto.Bucket{UpperBound: proto.Float64(b), CumulativeCount: proto.Uint64(cum)})
		}
		h.Bucket = append(h.Bucket, &dto.Bucket{UpperBound: proto.Float64(math.Inf(1)), CumulativeCount: proto.Uint64(dp.Count)})
		mf.Metric = append(mf.Metric, &dto.Metric{Label: labels(dp.Attributes), Histogram: h})
	}
	return mf
}
