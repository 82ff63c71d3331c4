// Package weft is the public facade of the weft runtime: start a runtime
// (Start), register agents (Runtime.NewAgent), run them (Agent.Run,
// Session.Run), decide what they wait for (Session.Resume with Approve,
// Deny, Complete, Fail, FailWith), cancel them (Session.Cancel), watch them
// (Agent.RunStream), see where a session stands (Session.Status) and read
// its record back (Session.Events, Returns, LifecycleReports). Its
// signatures use its own types and those of the public packages toolsets,
// events and llm, never those of actors.
//
// A run is an event-sourced actor conversation (see package actors): every
// change is appended to the session's stream in the event log before it
// takes effect, and published on its NATS subject
// (weft.evt.session.<id>.<type>). The default runtime embeds a
// nats-server whose JetStream keeps the log in a data directory; a
// cluster points every process at an external NATS URL.
package weft
