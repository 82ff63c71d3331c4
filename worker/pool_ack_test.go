package worker_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/weft-run/weft/bus"
	"github.com/weft-run/weft/internal/logtest"
	"github.com/weft-run/weft/protocol"
	"github.com/weft-run/weft/toolsets"
	"github.com/weft-run/weft/worker"
)

// ackMsg is a pooled call whose acknowledgement the test decides: its
// DoubleAck returns ackErr; Ack, Nak and Term are recorded.
type ackMsg struct {
	jetstream.Msg // nil: a method the worker should not call panics
	subject       string
	header        nats.Header
	data          []byte
	ackErr        error

	mu     sync.Mutex
	events []string
}

func (m *ackMsg) Subject() string      { return m.subject }
func (m *ackMsg) Headers() nats.Header { return m.header }
func (m *ackMsg) Data() []byte         { return m.data }

func (m *ackMsg) record(e string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.events = append(m.events, e)
}

func (m *ackMsg) DoubleAck(ctx context.Context) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if _, ok := ctx.Deadline(); !ok {
		m.record("double ack without a deadline")
	}
	m.record("double ack")
	return m.ackErr
}
func (m *ackMsg) Ack() error                       { m.record("ack"); return nil }
func (m *ackMsg) Nak() error                       { m.record("nak"); return nil }
func (m *ackMsg) NakWithDelay(time.Duration) error { m.record("nak"); return nil }
func (m *ackMsg) Term() error                      { m.record("term"); return nil }
func (m *ackMsg) recorded() []string               { m.mu.Lock(); defer m.mu.Unlock(); return slices.Clone(m.events) }

// TestPoolServesOnlyConfirmedAcks hands a pooled worker a call whose
// acknowledgement the server does not confirm: the worker must not run it
// (the message is redelivered, or, if the acknowledgement landed, the node
// sends the call again), and says so in a warning. A call whose
// acknowledgement is confirmed runs once.
func TestPoolServesOnlyConfirmedAcks(t *testing.T) {
	srv, err := bus.StartServer(bus.ServerConfig{Listen: "127.0.0.1:-1", StoreDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Shutdown)
	nc, err := nats.Connect(srv.ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)

	var runs atomic.Int32
	tool, err := toolsets.NewContextFunc("deploy", func(ctx context.Context, tc *toolsets.ToolContext, _ noArgs) (string, error) {
		runs.Add(1)
		return "deployed", nil
	}, toolsets.WithDescription("deploys"))
	if err != nil {
		t.Fatal(err)
	}
	logs := &logtest.Buffer{}
	w, err := worker.New(nc, []toolsets.Tool{tool}, worker.WithPool("p"),
		worker.WithLogger(slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelWarn}))))
	if err != nil {
		t.Fatal(err)
	}
	subject, err := protocol.WorkerQueueSubject(bus.Default, "p", "deploy")
	if err != nil {
		t.Fatal(err)
	}
	// reports collects the types of the reports sent to the call's reply.
	reply := nats.NewInbox()
	reports := make(chan string, 16)
	sub, err := nc.Subscribe(reply, func(m *nats.Msg) {
		var r protocol.ToolReport
		if err := json.Unmarshal(m.Data, &r); err != nil {
			t.Errorf("report %q: %v", m.Data, err)
		}
		reports <- string(r.Type)
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sub.Unsubscribe() })
	msg := func(call string, ackErr error) *ackMsg {
		body, err := json.Marshal(protocol.ToolRequest{SessionID: "s1", RunID: "r1", CallID: call, Name: "deploy", Arguments: json.RawMessage(`{}`)})
		if err != nil {
			t.Fatal(err)
		}
		h := nats.Header{}
		h.Set(protocol.HeaderReply, reply)
		h.Set(protocol.HeaderCallID, call)
		return &ackMsg{subject: subject, header: h, data: body, ackErr: ackErr}
	}
	// drain returns the report types sent so far.
	drain := func() []string {
		if err := nc.Flush(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(100 * time.Millisecond)
		var got []string
		for {
			select {
			case r := <-reports:
				got = append(got, r)
			default:
				return got
			}
		}
	}

	lost := msg("c1", errors.Join(nats.ErrTimeout, errors.New("the server died")))
	w.TakePooled(t.Context(), lost)
	if n := runs.Load(); n != 0 {
		t.Errorf("tool ran %d times after an unconfirmed acknowledgement, want 0", n)
	}
	if got, want := lost.recorded(), []string{"double ack"}; !slices.Equal(got, want) {
		t.Errorf("unconfirmed call: acknowledgements %v, want %v", got, want)
	}
	if got := drain(); !slices.Equal(got, []string{string(protocol.ReportHeartbeat)}) {
		t.Errorf("unconfirmed call: reports %v, want only the first heartbeat", got)
	}
	if l := logs.String(); !strings.Contains(l, "level=WARN") || !strings.Contains(l, subject) || !strings.Contains(l, "the server died") {
		t.Errorf("no warning naming the subject and the error; logs:\n%s", l)
	}

	confirmed := msg("c2", nil)
	w.TakePooled(t.Context(), confirmed)
	if n := runs.Load(); n != 1 {
		t.Errorf("tool ran %d times after a confirmed acknowledgement, want 1", n)
	}
	if got, want := confirmed.recorded(), []string{"double ack"}; !slices.Equal(got, want) {
		t.Errorf("confirmed call: acknowledgements %v, want %v", got, want)
	}
	if got := drain(); !slices.Contains(got, string(protocol.ReportReturned)) {
		t.Errorf("confirmed call: reports %v, want a return", got)
	}
}
