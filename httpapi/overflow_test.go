package httpapi

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/weft-run/weft"
	"github.com/weft-run/weft/events"
	"github.com/weft-run/weft/events/memstore"
	"github.com/weft-run/weft/llm"
	"github.com/weft-run/weft/toolsets"
)

// A stream whose buffer of live copies overflows (here a buffer of one,
// under a burst of large progress events its client does not read until
// the run has completed) still sends every event once, in
// order: what it missed it reads from the log.
func TestSessionEventsOverflow(t *testing.T) {
	rt, err := weft.Start(t.Context(), weft.Config{Store: memstore.New()})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	type noArgs struct{}
	// Events of 50 KB each fill the connection's buffers while the
	// client does not read, so that the stream's buffer overflows.
	pad := strings.Repeat("x", 50<<10)
	work, err := toolsets.NewContextFunc("work", func(_ context.Context, tc *toolsets.ToolContext, _ noArgs) (string, error) {
		for i := range 200 {
			if err := tc.Emit("step", map[string]any{"i": i, "pad": pad}); err != nil {
				return "", err
			}
		}
		return "worked", nil
	})
	if err != nil {
		t.Fatal(err)
	}
	model := llm.NewScripted(llm.ScriptToolCalls(llm.ToolCall{ID: "c1", Name: "work", Arguments: json.RawMessage(`{}`)}), llm.ScriptText("done"))
	ag, err := rt.NewAgent("w", weft.AgentConfig{Model: model, Tools: []toolsets.Tool{work}})
	if err != nil {
		t.Fatal(err)
	}
	api, err := New(rt, Config{Agents: []*weft.Agent{ag}})
	if err != nil {
		t.Fatal(err)
	}
	api.liveBuffer = 1
	srv := httptest.NewServer(api)
	defer srv.Close()
	defer api.Close()
	req, _ := http.NewRequestWithContext(t.Context(), "GET", srv.URL+"/v1/sessions/s1/events", nil)
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	runID, err := ag.Session("s1").Start(t.Context(), "go")
	if err != nil {
		t.Fatal(err)
	}
	// Read only once the run has completed.
	if _, err := ag.Session("s1").Wait(t.Context(), runID); err != nil {
		t.Fatal(err)
	}
	var got []uint64
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		if id, ok := strings.CutPrefix(sc.Text(), "id: "); ok {
			n, err := strconv.ParseUint(id, 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, n)
		}
		if strings.Contains(sc.Text(), `"type":"run.completed"`) {
			break
		}
	}
	evs, err := rt.Store().ReadStream(t.Context(), events.SessionStream("s1"), 0)
	if err != nil {
		t.Fatal(err)
	}
	var want []uint64
	for _, ev := range evs {
		want = append(want, ev.Position)
	}
	if api.fanout.drops.Load() == 0 {
		t.Fatal("the stream's buffer never overflowed: the test tests nothing")
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("positions streamed (-log +stream):\n%s", diff)
	}
}
