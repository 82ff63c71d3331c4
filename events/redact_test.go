package events_test

import (
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/weft-run/weft/events"
)

// secret marks every private value in the redaction tests: no live copy
// may contain it.
const secret = "SECRET-token-4711"

// privateSamples are data values of the types with private surfaces, each
// with every surface set, and the data their live copy must decode to.
var privateSamples = map[events.Type]struct {
	data, want any
	redacted   []string
}{
	events.TypeToolReturned: {
		data: events.ToolReturned{Tool: "deploy", IsError: true, Attempt: 3,
			Return: json.RawMessage(`{"call_id":"c1","tool_name":"deploy","kind":"execution","content":"\"failed <b>\"","private_metadata":{"stack":"` + secret + `","error":"` + secret + `"},"metadata":{"env":"prod"}}`),
			Error:  &events.ErrorInfo{Kind: "execution", Message: secret, Type: "*errors.errorString"}},
		want: events.ToolReturned{Tool: "deploy", IsError: true, Attempt: 3,
			Return: json.RawMessage(`{"call_id":"c1","content":"\"failed <b>\"","kind":"execution","metadata":{"env":"prod"},"tool_name":"deploy"}`)},
		redacted: []string{"return.private_metadata", "error"},
	},
	events.TypeToolRetried: {
		data:     events.ToolRetried{Tool: "deploy", Attempt: 1, Error: events.ErrorInfo{Kind: "execution", Message: secret, Type: "*net.OpError"}},
		want:     events.ToolRetried{Tool: "deploy", Attempt: 1, Error: events.ErrorInfo{Kind: "execution"}},
		redacted: []string{"error.message", "error.type"},
	},
	events.TypeDeferredResolved: {
		data:     events.DeferredResolved{By: "bob", Return: json.RawMessage(`{"call_id":"c2","kind":"success","private_metadata":{"trace":"` + secret + `"}}`)},
		want:     events.DeferredResolved{By: "bob", Return: json.RawMessage(`{"call_id":"c2","kind":"success"}`)},
		redacted: []string{"return.private_metadata"},
	},
}

// TestRedactEveryType: the live copy of every catalogue type keeps what is
// public and loses every private surface, with a marker naming them; an
// event without private surfaces is published as it is stored.
func TestRedactEveryType(t *testing.T) {
	for _, typ := range events.Types() {
		t.Run(string(typ), func(t *testing.T) {
			ps, private := privateSamples[typ]
			if got := events.PrivateSurfaces(typ); !slices.Equal(got, ps.redacted) {
				t.Fatalf("PrivateSurfaces = %q, the test expects %q: add a private sample", got, ps.redacted)
			}
			data := samples[typ]
			if private {
				data = ps.data
			}
			ev := events.MustNew(typ, data, events.WithSession("s1"))
			ev.Stream, ev.Version, ev.PrevHash = "session-s1", 4, "abc"
			stored := ev
			storedData := slices.Clone(ev.Data)
			live, err := events.Redact(ev)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(ev.Data, storedData) || ev.Redacted != nil {
				t.Fatal("Redact changed the stored event")
			}
			if !private {
				if diff := cmp.Diff(stored, live); diff != "" {
					t.Fatalf("a type without private surfaces changed (-stored +live):\n%s", diff)
				}
				return
			}
			if strings.Contains(string(live.Data), secret) {
				t.Fatalf("the live copy leaks a private value: %s", live.Data)
			}
			if !slices.Equal(live.Redacted, ps.redacted) {
				t.Errorf("Redacted = %q, want %q", live.Redacted, ps.redacted)
			}
			got, err := events.Decode(live)
			if err != nil {
				t.Fatalf("the live copy does not decode: %v", err)
			}
			if diff := cmp.Diff(ps.want, got); diff != "" {
				t.Errorf("live data (-want +got):\n%s", diff)
			}
			// The envelope around the data is the stored one.
			live.Data, live.Redacted = stored.Data, nil
			if diff := cmp.Diff(stored, live); diff != "" {
				t.Errorf("envelope changed (-stored +live):\n%s", diff)
			}
		})
	}
}

// TestRedactNothingPresent: a tool return without private metadata and
// without a captured error is published whole, unmarked.
func TestRedactNothingPresent(t *testing.T) {
	ev := events.MustNew(events.TypeToolReturned, events.ToolReturned{Tool: "t", Return: json.RawMessage(`{"call_id":"c","private":1,"x":{"private_metadata":2}}`)})
	live, err := events.Redact(ev)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(ev, live); diff != "" {
		t.Fatalf("(-want +got):\n%s", diff)
	}
}

// TestRedactMalformedFailsClosed: data that is not an object cannot be
// redacted, and Redact says so instead of handing it on.
func TestRedactMalformedFailsClosed(t *testing.T) {
	for name, data := range map[string]string{
		"array":       `["` + secret + `"]`,
		"string":      `"` + secret + `"`,
		"bad return":  `{"tool":"t","return":{"private_metadata":` + `}}`,
		"not an json": `{"tool":`,
	} {
		t.Run(name, func(t *testing.T) {
			ev := events.Event{Type: events.TypeToolReturned, Data: json.RawMessage(data)}
			if live, err := events.Redact(ev); !errors.Is(err, events.ErrMalformed) {
				t.Fatalf("Redact = %s, %v; want ErrMalformed", live.Data, err)
			}
		})
	}
}

// TestRedactedEnvelope: the marker travels in the envelope, as
// encoding/json writes it, and parses back.
func TestRedactedEnvelope(t *testing.T) {
	ps := privateSamples[events.TypeToolRetried]
	ev := events.MustNew(events.TypeToolRetried, ps.data, events.WithSession("s1"))
	ev.Stream, ev.Version = "session-s1", 2
	live, err := events.Redact(ev)
	if err != nil {
		t.Fatal(err)
	}
	b, err := events.AppendJSON(nil, &live, true)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := json.Marshal(live)
	if string(b) != string(want) {
		t.Fatalf("AppendJSON:\n%s\njson.Marshal:\n%s", b, want)
	}
	if !strings.Contains(string(b), `"redacted":["error.message","error.type"]`) {
		t.Fatalf("no marker in %s", b)
	}
	back, err := events.ParseEvent(b)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(live, back); diff != "" {
		t.Fatalf("(-want +got):\n%s", diff)
	}
}

// TestAppendRefusesLiveCopy: a redacted live copy is not an event; a store
// must not take it for one.
func TestAppendRefusesLiveCopy(t *testing.T) {
	ev := events.MustNew(events.TypeToolReturned, privateSamples[events.TypeToolReturned].data)
	live, err := events.Redact(ev)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := events.PrepareAppend("session-1", []events.Event{live}, 0); !errors.Is(err, events.ErrInvalidEvent) {
		t.Fatalf("PrepareAppend(live copy) = %v, want ErrInvalidEvent", err)
	}
}

// TestPrivateSurfacesCoverReturns: every data member holding a canonical
// tool return ("return") has its private metadata declared private, so a
// new type carrying a return cannot leak it unnoticed.
func TestPrivateSurfacesCoverReturns(t *testing.T) {
	for _, typ := range events.Types() {
		rt := reflect.TypeOf(samples[typ])
		for i := range rt.NumField() {
			name, _, _ := strings.Cut(rt.Field(i).Tag.Get("json"), ",")
			if name == "return" && !slices.Contains(events.PrivateSurfaces(typ), "return.private_metadata") {
				t.Errorf("%s carries a return but does not redact return.private_metadata", typ)
			}
			if strings.HasPrefix(name, "private") && !slices.Contains(events.PrivateSurfaces(typ), name) {
				t.Errorf("%s has member %q but does not redact it", typ, name)
			}
		}
	}
}
