package protocol

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/weft-run/weft/bus"
)

func TestValidatePool(t *testing.T) {
	tests := []struct {
		pool string
		ok   bool
	}{
		{"gpu", true},
		{"GPU_pool-2", true},
		{strings.Repeat("p", 64), true},
		{"", false},
		{strings.Repeat("p", 65), false},
		{"a.b", false},
		{"a*", false},
		{"a b", false},
		{"pé", false},
	}
	for _, tc := range tests {
		err := ValidatePool(tc.pool)
		if tc.ok != (err == nil) || (err != nil && !errors.Is(err, ErrBadPool)) {
			t.Errorf("ValidatePool(%q) = %v, want ok %v (else ErrBadPool)", tc.pool, err, tc.ok)
		}
		if _, err := WorkerQueueSubject(bus.Default, tc.pool, "lookup"); tc.ok != (err == nil) {
			t.Errorf("WorkerQueueSubject(pool %q) = %v, want ok %v", tc.pool, err, tc.ok)
		}
	}
}

// TestWorkerQueueNames: the pool stream, subjects and consumer under the
// default root and another one.
func TestWorkerQueueNames(t *testing.T) {
	other := subjectsOf(t, "acme.prod-eu")
	queue := func(s bus.Subjects, pool, name string) string {
		subject, err := WorkerQueueSubject(s, pool, name)
		if err != nil {
			t.Fatal(err)
		}
		return subject
	}
	scfg, ocfg := WorkerQueueStreamConfig(bus.Default, 0), WorkerQueueStreamConfig(other, 3)
	ccfg := WorkerPoolConsumerConfig(other, "gpu")
	got := map[string]any{
		"stream":               WorkerQueueStream(bus.Default),
		"stream, other":        WorkerQueueStream(other),
		"subject":              queue(bus.Default, "gpu", "a.b"),
		"subject, other":       queue(other, "gpu", "lookup"),
		"stream subjects":      scfg.Subjects,
		"stream replicas":      scfg.Replicas,
		"other stream":         ocfg.Name,
		"other subjects":       ocfg.Subjects,
		"other replicas":       ocfg.Replicas,
		"consumer":             ccfg.Durable,
		"consumer filter":      ccfg.FilterSubject,
		"consumer ack wait ms": ccfg.AckWait.Milliseconds(),
	}
	want := map[string]any{
		"stream":               "WEFT_WORKER_QUEUE",
		"stream, other":        "ACME_PROD_EU_WORKER_QUEUE",
		"subject":              "weft.worker.queue.gpu.a%2Eb",
		"subject, other":       "acme.prod-eu.worker.queue.gpu.lookup",
		"stream subjects":      []string{"weft.worker.queue.>"},
		"stream replicas":      1,
		"other stream":         "ACME_PROD_EU_WORKER_QUEUE",
		"other subjects":       []string{"acme.prod-eu.worker.queue.>"},
		"other replicas":       3,
		"consumer":             "pool_gpu",
		"consumer filter":      "acme.prod-eu.worker.queue.gpu.>",
		"consumer ack wait ms": int64(1000),
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("queue names (-want +got):\n%s", d)
	}
}
