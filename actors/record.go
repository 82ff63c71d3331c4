package actors

import (
	"time"

	"github.com/weft-run/weft/events"
)

// record is an event the session actor builds, with the typed values its
// data was encoded from, so that the actor folds those values instead of
// decoding the JSON it has just encoded. Events read from the log have no
// typed values; the fold decodes them (SessionState.Apply).
type record struct {
	events.Event
	// data is the events.* value Data encodes.
	data any
	// extra is a nested value Data carries as JSON: the llm.Message of a
	// model.response, the toolsets.Return of a tool.returned, the prompt
	// (string) of a run.started, the output (string) of a run.completed.
	extra any
}

// newRecord builds an event of type t about run/call with data encoded as
// JSON by events.NewData (sealed: the store takes it in without decoding
// it again). Its ID is set here (UUIDv7) so that a retried append is
// idempotent.
func newRecord(t events.Type, session, run, call string, data any) record {
	b, err := events.NewData(t, data)
	if err != nil {
		// Data structs of the catalogue always encode, and t's struct is
		// the one each caller passes; a failure here is a programming
		// error (or a value of the user's whose encoding failed). Records
		// are built in the session actor, whose recovery fails the run
		// with FailPanic (see settlePanic): the run ends, it does not hang.
		panic("actors: encode " + string(t) + ": " + err.Error())
	}
	// Time and SchemaVersion are set here, not left to the store, so that
	// the events the host publishes are the ones stored.
	sv, _ := t.SchemaVersion()
	return record{Event: events.Event{ID: events.NewID(), Type: t, SchemaVersion: sv, Time: time.Now().UTC(),
		SessionID: session, RunID: run, ToolCallID: call, Data: b}, data: data}
}

// newEvent is newRecord without the typed values.
func newEvent(t events.Type, session, run, call string, data any) events.Event {
	return newRecord(t, session, run, call, data).Event
}
