// Package weft is the public facade of the weft runtime: start a runtime
// (Start), register agents (Runtime.NewAgent), run them (Agent.Run,
// Session.Run), decide what they wait for (Session.Resume with Approve,
// Deny, Complete, Fail), cancel them (Session.Cancel) and watch them
// (Agent.RunStream).
//
// A run is an event-sourced actor conversation (see package actors): every
// change is appended to the session's stream in the event log before it
// takes effect, and published on its NATS subject
// (weft.evt.session.<id>.<type>). The default runtime embeds a
// nats-server whose JetStream keeps the log in a data directory; a
// cluster points every process at an external NATS URL.
package weft
