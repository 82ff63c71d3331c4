package httpapi_test

import (
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/weft-run/weft/events"
)

// BenchmarkStartToCompleted measures a one-tool run over HTTP: POST
// /v1/runs, then GET .../runs/{run}?wait= until it has completed (the
// model asks for one tool call, then answers).
func BenchmarkStartToCompleted(b *testing.B) {
	f := newFixture(b, fixtureOptions{noGate: true})
	b.ResetTimer()
	for b.Loop() {
		ref := f.start(b, "deploy")
		if run := f.wait(b, ref); run.Status != "completed" {
			b.Fatalf("run %+v", run)
		}
	}
}

// BenchmarkSSEFanOut measures 100 subscribers of one session's event
// stream while its run's tool reports b.N progress events (tool.progress,
// each appended and published on its own): the events delivered per
// second to all subscribers together, and the p50 and p99 latency from an
// event's append (its time) to its delivery to a subscriber.
func BenchmarkSSEFanOut(b *testing.B) {
	b.Run("burst", func(b *testing.B) { benchFanOut(b, 0) })
	// Paced at 100 events/s (10,000 deliveries/s), below what the burst
	// delivers: the latency of a stream that keeps up.
	b.Run("paced-10ms", func(b *testing.B) { benchFanOut(b, 10*time.Millisecond) })
	b.Run("paced-50ms", func(b *testing.B) { benchFanOut(b, 50*time.Millisecond) })
}

func benchFanOut(b *testing.B, every time.Duration) {
	const subscribers = 100
	f := newFixture(b, fixtureOptions{noGate: true, progress: b.N, progressEvery: every})
	const session = "fan-out"
	streams := make([]*sseStream, subscribers)
	for i := range streams {
		streams[i] = f.stream(b, "/v1/sessions/"+session+"/events", viewerToken)
	}
	var wg sync.WaitGroup
	lat := make([][]time.Duration, subscribers)
	b.ResetTimer()
	start := time.Now()
	for i, s := range streams {
		wg.Go(func() {
			for {
				ev := s.next(b)
				now := time.Now()
				env := decode[struct {
					Type string    `json:"type"`
					Time time.Time `json:"time"`
				}](b, []byte(ev.Data))
				lat[i] = append(lat[i], now.Sub(env.Time))
				if env.Type == string(events.TypeRunCompleted) {
					return
				}
			}
		})
	}
	code, body := f.do(b, "POST", "/v1/sessions/"+session+"/runs", operatorToken, map[string]any{"prompt": "deploy"})
	if code != http.StatusAccepted {
		b.Fatalf("start: %d %s", code, body)
	}
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	var all []time.Duration
	for i := range lat {
		all = append(all, lat[i]...)
	}
	slices.Sort(all)
	b.ReportMetric(float64(len(all))/elapsed.Seconds(), "events/s")
	b.ReportMetric(float64(all[len(all)*99/100].Microseconds())/1000, "p99-ms")
	b.ReportMetric(float64(all[len(all)/2].Microseconds())/1000, "p50-ms")
}
