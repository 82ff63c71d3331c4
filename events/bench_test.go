package events_test

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/weft-run/weft/events"
)

// benchEvent is an event of ~150 bytes of data, as the runtime records.
func benchEvent() events.Event {
	return events.Event{
		ID: uuid.MustParse("01900000-0000-7000-8000-000000000001"), Stream: "session-01900000-0000-7000-8000-000000000000",
		Type: events.TypeToolReturned, SchemaVersion: 1, Time: time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC),
		SessionID: "01900000-0000-7000-8000-000000000000", RunID: "01900000-0000-7000-8000-000000000002", ToolCallID: "call_1",
		Data: json.RawMessage(`{"tool":"deploy","result":{"environment":"production","release":"v1.4.2","status":"ok"},"duration_ms":12,"outcome":"ok"}`),
	}
}

// BenchmarkChain is the store's chain step for one appended event:
// unkeyed (the plain hash) and keyed (the hash and its HMAC).
func BenchmarkChain(b *testing.B) {
	keys, err := events.NewChainKeys()
	if err != nil {
		b.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		key  *events.ChainKey
	}{{"unkeyed", nil}, {"keyed", keys.Current()}} {
		b.Run(tc.name, func(b *testing.B) {
			batch := []events.Event{benchEvent()}
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				events.Chain(batch, uint64(i), "", tc.key)
			}
		})
	}
}

// BenchmarkVerify verifies a 10,000-event log: the plain chain, and with
// the keys (every MAC checked).
func BenchmarkVerify(b *testing.B) {
	keys, err := events.NewChainKeys()
	if err != nil {
		b.Fatal(err)
	}
	log := make([]events.Event, 10000)
	prev := ""
	for i := range log {
		log[i] = benchEvent()
		log[i].ID[15], log[i].ID[14] = byte(i), byte(i>>8)
		prev = events.Chain(log[i:i+1], uint64(i), prev, keys.Current())
	}
	seq := func(yield func(events.Event, error) bool) {
		for _, ev := range log {
			if !yield(ev, nil) {
				return
			}
		}
	}
	for _, tc := range []struct {
		name string
		keys *events.ChainKeys
	}{{"plain", nil}, {"keyed", keys}} {
		b.Run(tc.name, func(b *testing.B) {
			for b.Loop() {
				if _, err := events.VerifyStreams(seq, events.VerifyOptions{Keys: tc.keys}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(log)), "ns/event")
		})
	}
}

// BenchmarkCheckpoint signs a checkpoint of 1,000 stream heads.
func BenchmarkCheckpoint(b *testing.B) {
	keys, err := events.NewChainKeys()
	if err != nil {
		b.Fatal(err)
	}
	heads := make([]events.StreamHead, 1000)
	for i := range heads {
		heads[i] = events.StreamHead{Stream: fmt.Sprintf("session-%06d", i), Version: 17, Hash: fmt.Sprintf("%064x", i)}
	}
	for b.Loop() {
		if _, err := events.NewCheckpoint(heads, keys.Current(), time.Now()); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPrepareAppendSealed is PrepareAppend of one model.response event whose
// Data NewData sealed (taken in without a decode) and of the same bytes
// built by hand (validated and decoded strictly).
func BenchmarkPrepareAppendSealed(b *testing.B) {
	sealed, err := events.New(events.TypeModelResponse, events.ModelResponse{
		Model:        "m",
		Message:      json.RawMessage(`{"role":"assistant","parts":[{"kind":"text","text":"hello there, this is a reply of some length"}]}`),
		FinishReason: "stop", ToolCallIDs: []string{"call_1", "call_2"},
		Usage: &events.Usage{Requests: 1, InputTokens: 100, OutputTokens: 20},
	})
	if err != nil {
		b.Fatal(err)
	}
	byHand := sealed
	byHand.Data = append(json.RawMessage(nil), sealed.Data...)
	for _, bc := range []struct {
		name string
		ev   events.Event
	}{{"sealed", sealed}, {"by-hand", byHand}} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := events.PrepareAppend("session-s", []events.Event{bc.ev}, 0); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkDecode decodes the data of every event of the projections'
// golden histories (every kind of event a run records): with Decode, and
// with the old path alone (encoding/json and checkKeys), for comparison.
func BenchmarkDecode(b *testing.B) {
	var log []events.Event
	for typ, datas := range goldenData(b) {
		for _, d := range datas {
			log = append(log, events.Event{Type: typ, SchemaVersion: 1, Data: d})
		}
	}
	for _, bc := range []struct {
		name   string
		decode func(events.Event) (any, error)
	}{
		{"Decode", events.Decode},
		{"old-path", func(ev events.Event) (any, error) { return events.DecodeOldPath(ev.Type, ev.Data) }},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				for _, ev := range log {
					if _, err := bc.decode(ev); err != nil {
						b.Fatal(err)
					}
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(log)), "ns/event")
			b.ReportMetric(0, "ns/op")
		})
	}
}
