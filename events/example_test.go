package events_test

import (
	"fmt"
	"os"
	"time"

	"github.com/google/uuid"

	"github.com/weft-run/weft/events"
)

func ExampleNew() {
	call := events.MustNew(events.TypeToolRequested, events.ToolRequested{Tool: "search"},
		events.WithSession("s1"), events.WithRun("r1"), events.WithToolCall("c1"))
	done, err := events.New(events.TypeToolReturned, events.ToolReturned{Tool: "search", Return: []byte(`"3 results"`)},
		events.WithCause(call))
	if err != nil {
		panic(err)
	}
	fmt.Println(done.Type, done.SchemaVersion, done.ToolCallID, done.CausationID == call.ID.String())
	fmt.Println(string(done.Data))
	// Output:
	// tool.returned 1 c1 true
	// {"tool":"search","return":"3 results"}
}

func ExampleDecode() {
	ev := events.MustNew(events.TypeToolProgress, events.ToolProgress{Tool: "crawl", Progress: 3, Total: 10})
	data, err := events.Decode(ev)
	if err != nil {
		panic(err)
	}
	switch d := data.(type) {
	case events.ToolProgress:
		fmt.Printf("%s: %v of %v\n", d.Tool, d.Progress, d.Total)
	}

	ev.SchemaVersion = 9
	_, err = events.Decode(ev)
	fmt.Println(err)
	// Output:
	// crawl: 3 of 10
	// decode: events: unknown schema version: tool.progress version 9 (current 1)
}

func ExampleWriteJSONL() {
	ev := events.MustNew(events.TypeRunStarted, events.RunStarted{Agent: "planner"},
		events.WithID(uuid.MustParse("0192d6a0-0000-7000-8000-000000000001")),
		events.WithTime(time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)),
		events.WithSession("s1"))
	ev.Stream, ev.Version, ev.Position = events.SessionStream("s1"), 1, 1
	if err := events.WriteJSONL(os.Stdout, []events.Event{ev}); err != nil {
		panic(err)
	}
	// Output:
	// {"id":"0192d6a0-0000-7000-8000-000000000001","stream":"session-s1","version":1,"position":1,"type":"run.started","schema_version":1,"time":"2025-01-02T03:04:05Z","session_id":"s1","data":{"agent":"planner"}}
}
