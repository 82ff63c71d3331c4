package events_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/weft-run/weft/events"
)

func TestCheckStored(t *testing.T) {
	good := events.MustNew(events.TypeRunCancelled, events.RunCancelled{By: "alice"}, events.WithSession("s1"))
	good.Stream, good.Version, good.Position = events.SessionStream("s1"), 3, 7
	tests := []struct {
		name string
		edit func(*events.Event)
		want error // nil: not poison
	}{
		{"decodes", func(*events.Event) {}, nil},
		{"unknown type", func(ev *events.Event) { ev.Type = "run.cancel" }, events.ErrUnknownType},
		{"unknown schema version", func(ev *events.Event) { ev.SchemaVersion = 2 }, events.ErrUnknownSchemaVersion},
		{"unknown field", func(ev *events.Event) { ev.Data = json.RawMessage(`{"by":"alice","why":"x"}`) }, events.ErrMalformed},
		{"field of another type", func(ev *events.Event) { ev.Data = json.RawMessage(`{"by":1}`) }, events.ErrMalformed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ev := good
			tt.edit(&ev)
			err := events.CheckStored(ev)
			if tt.want == nil {
				if err != nil {
					t.Fatalf("CheckStored = %v, want nil", err)
				}
				return
			}
			var p *events.PoisonError
			if !errors.As(err, &p) || !errors.Is(err, events.ErrPoison) || !errors.Is(err, tt.want) {
				t.Fatalf("CheckStored = %v, want a *PoisonError matching %v", err, tt.want)
			}
			if p.Stream != ev.Stream || p.Version != 3 || p.Position != 7 || p.ID != ev.ID || p.SessionID() != "s1" {
				t.Errorf("poison %+v does not name the event", p)
			}
			for _, s := range []string{"position 7", `"session-s1"`, "version 3", ev.ID.String()} {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("%q does not say %s", err, s)
				}
			}
		})
	}
}

func TestPoisonErrorOfARawMessage(t *testing.T) {
	p := &events.PoisonError{Stream: "other-x", Position: 9, Reason: "not json", Err: events.ErrMalformed}
	if p.SessionID() != "" || p.ID != uuid.Nil {
		t.Errorf("raw poison %+v names a session or an id", p)
	}
	if got, want := p.Error(), `poison event at position 9 in stream "other-x": not json`; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	d := &events.DamagedStoreError{Stream: "session-a", Version: 4, Reason: "gap"}
	if !errors.Is(d, events.ErrDamagedStore) || d.Error() != `damaged store: stream "session-a" version 4: gap` {
		t.Errorf("DamagedStoreError: %q", d)
	}
}
