package weft_test

import (
	"context"
	"errors"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/weft-run/weft"
	"github.com/weft-run/weft/actors"
	"github.com/weft-run/weft/bus"
	"github.com/weft-run/weft/events"
	jsstore "github.com/weft-run/weft/events/jetstream"
	"github.com/weft-run/weft/internal/logtest"
	"github.com/weft-run/weft/llm"
)

// Recovery over a log with a damaged running session (a raw "not json"
// message in its stream) carries the other running session on to its end,
// logs the damaged one by id and reports it as a *actors.DamagedError; a
// command to the damaged session is refused with ErrSessionDamaged.
func TestRecoverGoesOnPastADamagedSession(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	dir := t.TempDir()
	func() {
		srv, err := bus.StartServer(bus.ServerConfig{StoreDir: filepath.Join(dir, "nats")})
		if err != nil {
			t.Fatal(err)
		}
		defer srv.Shutdown()
		nc, err := srv.Connect()
		if err != nil {
			t.Fatal(err)
		}
		defer nc.Close()
		s, err := jsstore.New(ctx, nc)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		for _, id := range []string{"good", "bad"} {
			ev := events.MustNew(events.TypeRunStarted, events.RunStarted{Agent: "a", Input: []byte(`"hi"`)},
				events.WithSession(id), events.WithRun("r1"))
			if _, err := s.Append(ctx, events.SessionStream(id), events.NoStream, ev); err != nil {
				t.Fatal(err)
			}
		}
		js, err := jetstream.New(nc)
		if err != nil {
			t.Fatal(err)
		}
		subject, _ := bus.Default.LogIngest(events.SessionStream("bad"), string(events.TypeModelRequest))
		if _, err := js.Publish(ctx, subject, []byte("not json")); err != nil {
			t.Fatal(err)
		}
	}()

	logs := &logtest.Buffer{}
	rt, err := weft.Start(ctx, weft.Config{DataDir: dir, Logger: slog.New(slog.NewTextHandler(logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rt.Close() })
	agent, err := rt.NewAgent("a", weft.AgentConfig{Model: llm.Func(func(context.Context, *llm.Request) (*llm.Response, error) {
		return &llm.Response{Text: "done"}, nil
	})})
	if err != nil {
		t.Fatal(err)
	}
	ids, err := rt.Recover(ctx)
	var damaged *actors.DamagedError
	if !errors.Is(err, weft.ErrSessionDamaged) || !errors.As(err, &damaged) {
		t.Fatalf("Recover: %v, want a *actors.DamagedError", err)
	}
	if len(ids) != 1 || ids[0] != "good" || len(damaged.Sessions) != 1 || damaged.Sessions[0].ID != "bad" || !errors.Is(damaged.Sessions[0].Err, events.ErrPoison) {
		t.Fatalf("Recover: carried on %v, damaged %+v; want good carried on, bad damaged by poison", ids, damaged.Sessions)
	}
	if !strings.Contains(logs.String(), "session=bad") {
		t.Errorf("the log does not name the damaged session:\n%s", logs)
	}
	res, err := agent.Session("good").Wait(ctx, "r1")
	if err != nil || res.Status != weft.StatusCompleted {
		t.Fatalf("the recovered run: %+v, %v, want it completed", res, err)
	}
	if err := agent.Session("bad").Cancel(ctx, "r1", "alice", "stop"); !errors.Is(err, weft.ErrSessionDamaged) {
		t.Errorf("Cancel of the damaged session: %v, want ErrSessionDamaged", err)
	}
}
