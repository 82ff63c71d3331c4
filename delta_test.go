package weft_test

import (
	"context"
	"encoding/json"
	"iter"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/weft-run/weft"
	"github.com/weft-run/weft/events"
	"github.com/weft-run/weft/llm"
	"github.com/weft-run/weft/toolsets"
)

// streamer streams the answers of a script: each text in pieces of
// `piece` bytes, each tool call's arguments in two fragments, then the
// whole response.
type streamer struct {
	*llm.Scripted
	piece int
}

func (s streamer) Stream(ctx context.Context, req *llm.Request) iter.Seq2[llm.StreamEvent, error] {
	return func(yield func(llm.StreamEvent, error) bool) {
		resp, err := s.Request(ctx, req)
		if err != nil {
			yield(llm.StreamEvent{}, err)
			return
		}
		for text := resp.Text; text != ""; {
			n := min(s.piece, len(text))
			if !yield(llm.StreamEvent{TextDelta: text[:n]}, nil) {
				return
			}
			text = text[n:]
		}
		for i, c := range resp.ToolCalls {
			args := string(c.Arguments)
			half := len(args) / 2
			if !yield(llm.StreamEvent{ToolCalls: []llm.ToolCallDelta{{Index: i, ID: c.ID, Name: c.Name, ArgumentsDelta: args[:half]}}}, nil) ||
				!yield(llm.StreamEvent{ToolCalls: []llm.ToolCallDelta{{Index: i, ArgumentsDelta: args[half:]}}}, nil) {
				return
			}
		}
		yield(llm.StreamEvent{Response: resp}, nil)
	}
}

// A streaming model's output reaches RunStream with IncludeDeltas while it
// writes: the text and the tool-call arguments, in order, numbered, each
// step's before its model.response; the log holds none of it.
func TestRunStreamIncludesDeltas(t *testing.T) {
	rt := newRuntime(t)
	echo := tool(t, "echo", func(context.Context, *toolsets.ToolContext, noArgs) (any, error) { return "echoed", nil })
	ts, _ := toolsets.New("t", []toolsets.Tool{echo})
	model := streamer{Scripted: llm.NewScripted(
		llm.ScriptToolCalls(llm.ToolCall{ID: "c1", Name: "echo", Arguments: json.RawMessage(`{"say":"hi there"}`)}),
		llm.ScriptText("Hello, streamed world.")), piece: 3}
	a := newAgent(t, rt, weft.AgentConfig{Model: model, Toolsets: []toolsets.Toolset{ts}})
	s := a.NewSession()
	var (
		text, args strings.Builder
		seqs       = map[int][]int{}
		recorded   []events.Type
	)
	responded := map[int]bool{}
	step := 0
	for ev, err := range s.RunStream(t.Context(), "go", weft.IncludeDeltas()) {
		if err != nil {
			t.Fatal(err)
		}
		switch ev.Type {
		case events.TypeModelDelta:
			var d events.ModelDelta
			if err := json.Unmarshal(ev.Data, &d); err != nil {
				t.Fatal(err)
			}
			if responded[d.Step] {
				t.Errorf("a delta of step %d came after its model.response", d.Step)
			}
			if ev.Version != 0 || ev.SessionID != s.ID() || ev.RunID == "" {
				t.Errorf("delta envelope: version %d, session %q, run %q", ev.Version, ev.SessionID, ev.RunID)
			}
			seqs[d.Step] = append(seqs[d.Step], d.Seq)
			text.WriteString(d.Text)
			for _, c := range d.ToolCalls {
				args.WriteString(c.Arguments)
			}
			continue
		case events.TypeModelRequest:
			step++
		case events.TypeModelResponse:
			responded[step] = true
		}
		recorded = append(recorded, ev.Type)
	}
	if got, want := text.String(), "Hello, streamed world."; got != want {
		t.Errorf("text deltas = %q, want %q", got, want)
	}
	if got, want := args.String(), `{"say":"hi there"}`; got != want {
		t.Errorf("argument deltas = %q, want %q", got, want)
	}
	if want := map[int][]int{1: {1, 2}, 2: {1, 2, 3, 4, 5, 6, 7, 8}}; !cmp.Equal(seqs, want) {
		t.Errorf("delta seqs = %v, want %v", seqs, want)
	}
	logged := types(streamEvents(t, rt, s.ID()))
	if d := cmp.Diff(logged[:min(len(recorded), len(logged))], recorded); d != "" {
		t.Errorf("the stream's recorded events differ from the log (-log +stream):\n%s", d)
	}
	for _, typ := range logged {
		if typ == events.TypeModelDelta {
			t.Error("the log holds a model.delta")
		}
	}
}

// Without IncludeDeltas, RunStream yields only recorded events; and a
// subscriber to the delta subjects that never reads does not hold up a run
// that streams many deltas.
func TestDeltasNeverHoldUpTheRun(t *testing.T) {
	rt := newRuntime(t)
	stalled, err := rt.Conn().SubscribeSync("weft.delta.>")
	if err != nil {
		t.Fatal(err)
	}
	defer stalled.Unsubscribe()
	if err := rt.Conn().Flush(); err != nil {
		t.Fatal(err)
	}
	long := strings.Repeat("x", 20000)
	model := streamer{Scripted: llm.NewScripted(llm.ScriptText(long)), piece: 1}
	a := newAgent(t, rt, weft.AgentConfig{Model: model})
	for ev, err := range a.NewSession().RunStream(t.Context(), "go") {
		if err != nil {
			t.Fatal(err)
		}
		if ev.Type == events.TypeModelDelta {
			t.Fatal("RunStream without IncludeDeltas yielded a delta")
		}
	}
	if n, _, _ := stalled.Pending(); n == 0 {
		t.Error("the stalled subscriber was offered no delta: the test does not test a stalled consumer")
	}
}
