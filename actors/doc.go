// Package actors runs agent runs as protoactor actors that talk over NATS
// and record every state change in the event log before acting on it.
//
// # Actors
//
//   - Session actor (one per session, in the process that received a
//     command for it): its state is only the fold of its stream
//     (SessionState.Apply). It appends every change with the state's
//     version as the expected version, then applies it (a fused append
//     is applied first, see Appends), then acts; it is the only writer of
//     its stream. It is a thin shell (session*.go)
//     around the session core (core*.go), a pure decider: given the
//     state, the in-process facts of the active run that the log does not
//     hold (runFacts: the prepared inventory, whether a preparation, a
//     model request or a batch is under way, the calls in flight) and one
//     input (a command, a model reply, a tool report, a prepared
//     inventory, an advance), the core returns a decision: the events to
//     append (in one append or split, see Appends), the effects to perform
//     once they are (answer the command, prepare the tools of a step, call
//     the model, dispatch a batch), and whether to carry on (decide
//     again). The core touches no actor, store, clock or goroutine, and is
//     tested given/when/then (core*_test.go). The shell appends, applies,
//     performs and asks again; it also exits a run's toolsets and tells
//     the run's watchers once the run settles. A session rebuilt from its
//     stream has no facts: the core prepares again and carries on where
//     the log stopped. One concept per file: core_command.go (start,
//     resume, cancel), core_model.go (model requests and replies, prepared
//     inventories), core_batch.go (batches, the approval policy, waiting
//     for approvals and deferred calls), core_tool.go (tool reports),
//     core_recovery.go (what the run does next, completion of split
//     appends), core_limits.go (limits and budgets), core_code.go (the
//     calls of code-mode programs, durable by replay), core_code_prompt.go
//     (code mode's tools and the instructions' tool placeholders),
//     core_selection.go (a run's tool selection), core_handlers.go (error
//     handlers); decide.go holds the rules of a resume's decisions.
//   - Toolset-lifecycle actor (a child of the session actor): prepares the
//     run's toolsets (the agent's, then those attached to the run with
//     Host.AttachRunToolsets) before every model request, and after a
//     resume or a restart, through one toolsets.Lifecycle per toolset
//     (built once per agent at Register, once per run for the run's own):
//     enter before the first preparation, refresh on later ones, each step
//     under the toolset's LifecyclePolicy (AgentSpec.PrepareTimeout is the
//     read timeout of toolsets without one). When a run ends it exits them.
//     The session records each lifecycle report as toolset.{state} (with
//     name, id, state, tool and instruction counts, message):
//     initialized, failed, unavailable and closed always, refreshed when
//     the tools or instructions changed or after a resume. A failed step,
//     a timeout, an unavailable toolset under FailWhenUnavailable, or two
//     tools with one name fail the run (toolset_error); an approval or
//     deferral entry that matches nothing in the step's inventory fails it
//     with policy_error (see FailPolicy). toolset.closed is
//     appended after the run's final event; the run's watchers hear of the
//     outcome once it is recorded.
//   - Tool search: the tool_search.* progress of search and proxy tools
//     is recorded as tool_search.loaded / no_match / failed events, and a
//     search toolset's first preparation in a session as
//     tool_search.initialized. The fold keeps the loaded tools per search
//     toolset (SessionState.Search); a session actor gives them back to
//     a search toolset that holds none for the session (after a restart,
//     or a restored archive).
//   - Output validators (AgentSpec.OutputValidators) run on the model
//     goroutine; a rejection is recorded in model.response
//     (output_rejected) and the fold turns it into a retry prompt.
//   - Composition (issue 19): the agent's tool hooks (AgentSpec.ToolHooks)
//     are the run registry's agent-level hooks, and run around remote
//     calls in the scheduler (scheduler_hooks.go); model-request and
//     run-complete hooks run on the model goroutine and fail the run with
//     capability_error (core_capability.go); a sub-run names its parent in
//     run metadata (MetaParent), copied into run.started, and its end comes
//     back as a deferred result that carries its usage (core_subrun.go);
//     a handoff tool's return makes the core record run.handoff and the
//     shell rebuild the run's facts for the new agent (core_handoff.go).
//   - Tool batches: the session dispatches the calls of a batch in
//     parallel by default, one at a time in model order when a called tool
//     is sequential or a tool that is not concurrent-safe repeats in the
//     response (sequentialBatch decides). A batch of local tools only runs
//     in goroutines (localBatch): each call executes through the run's
//     registry (timeouts, internal retries and cooperative cancellation are
//     the registry's) and hands its reports to the session actor as Go
//     values; no actor is spawned and nothing crosses NATS. A batch with a
//     call of a remote tool runs in a scheduler actor (a child of the
//     session actor), which sends the remote calls to workers, watches
//     them, runs the local ones as above and forwards every report to the
//     session. The session appends tool.returned as each call finishes and
//     hands the returns to the model in model order.
//
// Actors never wait in Receive for a model, a toolset or a tool: those run
// in owned goroutines or child actors and report back with messages. The
// session actor's store appends (and its initial stream read) do happen in
// Receive: they are the actor's state transitions.
//
// A session actor's mailbox (mailbox.go) keeps protoactor's contract but
// not always its goroutine. A model request and a batch's local calls are
// tasks the actor starts; the goroutine of a task (a runner) carries the
// message it ends with to the actor itself: it runs the actor's mailbox
// until it is empty (carryBudget messages at most, then the dispatcher
// takes over), and takes the first task the actor starts meanwhile to run
// next. So the model request's goroutine runs the calls its reply asks
// for, and a call's goroutine the next model request: a one-call run
// hands over between goroutines twice (the command to the actor, the
// outcome to its caller) instead of after every message, each hand-over
// being a wake-up of another thread. Commands are not carried (their
// callers must stay free to leave at their context's end), nor is any
// message from another actor; those run the mailbox on the dispatcher.
//
// # Subjects and messages (PROTOCOL)
//
// All bodies are JSON. The commands' are this package's (protocol.go). The
// tool calls' messages (ToolRequest, ToolReport, WorkerDescription), their
// Weft-* headers and the worker subjects are package protocol's, which the
// Go worker imports instead of the runtime (docs/worker-protocol.md is
// their specification); this package names them by aliases (wire.go).
//
//	weft.cmd.session.<id>.start    request StartCommand  {"run_id","agent","prompt"}
//	weft.cmd.session.<id>.resume   request ResumeCommand {"run_id","decisions":[Decision…]}
//	weft.cmd.session.<id>.cancel   request CancelCommand {"run_id","by","reason"}
//	  reply (all three)            CommandReply {"run_id","version"} or
//	                               {"error":{"verb","session_id","code","message"}}
//	                               on the request's reply subject, which must be an
//	                               inbox (InboxPrefix: "_INBOX.…" or "_INBOX_<role>.…")
//	                               or empty; a command with another reply subject is
//	                               dropped unanswered (the node may publish anywhere:
//	                               it never answers on a subject its sender chose freely)
//	weft.worker.call.<name>        request ToolRequest {"session_id","run_id","call_id","name",
//	                               "arguments","approval","model_retries","metadata"}
//	                               with the reply subject <inbox>.<n> (one per batch's
//	                               scheduler, under one inbox the host subscribes to),
//	                               which receives ToolReport {"type":"started"|"retried"|"progress",…}
//	                               messages, then exactly one {"type":"returned","return":{…}}.
//	                               "started" is sent for retries only (attempt 2 and up):
//	                               the scheduler records attempt 1 as started when it sends
//	                               the request, which saves a message per call.
//	                               Local tools run in the process that prepared the
//	                               run and never travel on NATS.
//	                               Headers Weft-Call-Id, Weft-Delivery and
//	                               Weft-Heartbeat-Ms; for tools served by remote workers
//	                               (Host.AddRemoteTools), in queue group "weft-workers";
//	                               the same reports plus {"type":"heartbeat"} every
//	                               WorkerHeartbeat. A call silent for MissedHeartbeats
//	                               intervals is sent again (same call id), at most
//	                               MaxDeliveries times; the first return wins.
//	weft.worker.queue.<pool>.<name>
//	                               the same request, for tools of a worker pool
//	                               (Host.AddPooledTools), published into the JetStream
//	                               work queue WorkerQueueStream with the reply subject in
//	                               header Weft-Reply; the pool's workers pull it (one
//	                               pull per free slot). No heartbeat deadline applies
//	                               until a worker reports: the call waits in the stream
//	                               (HostConfig.WorkerQueueWait at most; see pool.go).
//	weft.worker.cancel.<session id>.<run id>.<call id>
//	                               empty message: cancel a remote call (run cancelled/ended).
//	                               Call ids are unique only within a run: workers key
//	                               calls (running, re-delivered, cancelled) by the triple.
//	weft.worker.describe           request; every worker replies WorkerDescription
//	                               {"worker_id","tools":[Definition…],"pool"}.
//	                               See docs/worker-protocol.md.
//	weft.evt.session.<id>.<type>   the live copy of every appended event, its JSON envelope
//	                               with private surfaces redacted (events.Redact), published by
//	                               the host after the append, whatever the store.
//	                               An event whose data is in the blob store carries its
//	                               reference, as stored (events.ResolveBlob); resolving it
//	                               needs read access to the log's blob bucket.
//	weft.delta.session.<id>        live model output, never stored (see Live model output)
//
// A request or report too large for a NATS message carries its arguments
// ("arguments_blob") or return ("return_blob") by reference to the blob
// store instead, or the call returns an execution error saying why (see
// payload.go in package protocol).
//
// <id> is the session id escaped with bus.EscapeToken. Command error codes:
// unknown_agent, session_busy, unknown_run, not_waiting, run_ended,
// unknown_decision, duplicate_decision, already_decided, missing_decisions,
// wrong_decision, bad_command, internal, session_owned, unavailable,
// session_damaged; each
// matches its Err… sentinel (CommandError). A resume refused with one of
// unknown_run, not_waiting, unknown_decision, duplicate_decision,
// already_decided, missing_decisions or wrong_decision changes nothing and
// runs nothing, and is recorded as decision.refused (the decisions as
// sent, the code and the message) before the refusal is answered; when
// that record cannot be appended, the caller gets the append's error
// (unavailable, session_owned) instead and retries. unavailable (ErrUnavailable, which also matches
// ErrInternal) means the session's event store or lease bucket failed for
// a moment (JetStream restarting, a timeout): the command was not carried
// out, nothing was recorded, and the caller retries it. A session actor
// whose first read of its stream fails stays unloaded: it appends nothing,
// answers unavailable, and reads the stream again on its next command (or
// a Recover's advance) until a read succeeds. A stream the fold refuses
// is answered internal; one that holds poison, or that a damaged store
// cannot give back, session_damaged (ErrSessionDamaged, which also
// matches ErrInternal): reading it again reads the same damage. A lease operation made while routing a command
// (take, look up, forward) that fails transiently (a timeout, no
// responders, a reconnecting connection, JetStream answering 503) is
// answered unavailable too; other lease failures internal. With leases (see Ownership) a command may be forwarded
// to the session's owner on weft.node.<node>.cmd.session.<id>.<verb>.
// A start with a run id that already exists (same agent and prompt) is
// answered as done: retrying a start is idempotent.
//
// A Decision is {"id","action":"approve"|"deny"|"complete"|"fail","by",
// "reason","arguments" (reviewed arguments of an approval, a JSON object
// that must fit the tool's parameters schema: a resume whose run's tools are
// not prepared on this node, after a restart or a takeover, waits while
// they are prepared to check them), "result" (a completed deferred call's
// value, or a failed one's details: the failed return's content is then
// {"error","details"})}.
//
// # Live model output
//
// A model that streams (llm.Streamer) is asked through its stream, and
// what it writes is published while it writes on weft.delta.session.<id>
// (bus.Subjects.Delta), one message per stream chunk that adds text or
// tool-call arguments, when anyone subscribes. Each message is an event
// envelope of type model.delta: {"id","stream","type":"model.delta",
// "schema_version":1,"time","session_id","run_id","data":{"step","seq",
// "text","tool_calls":[{"index","id","name","arguments"}]}}, with no
// version, position or hash, because it is never recorded (stores refuse
// to append it; events.Type.LiveOnly). "step" is the model request's step
// in its run and "seq" numbers the step's deltas from 1; the concatenated
// "text" values are the answer's text, and the "arguments" of the
// fragments with one "index" a tool call's JSON arguments ("id" and
// "name" come with its first fragment). The model.response event that
// ends the step records the whole answer, as for a model that does not
// stream.
//
// Deltas go through the host's live publisher, after the events appended
// before them, but never wait for it: a delta it has no room for is
// dropped (a gap in "seq"), so neither a slow subscriber nor a stalled
// one slows the run. Readers subscribe as for events (reader, approver
// and operator roles; bus.Layout.Permissions). Session.RunStream yields
// them with the run option IncludeDeltas, weft tail with --deltas.
//
// # The loop
//
// run.started → toolset.* reports and model.request (one step) → the
// model call → model.response, tool.requested (one per call) and
// usage.snapshot (one step) → tool.started / tool.retried /
// tool.progress → tool.returned (one append per finished call) → … →
// model.response, usage.snapshot and run.completed (one step). See
// Appends for how a step is appended. tool.started of attempt 1 records
// that the scheduler sent the call to its tool subject; that of a later
// attempt, that the tool actor began the retry.
// model.request records the messages added since the run's previous
// request (the first records the whole conversation); the full request is
// a fold of the stream.
//
// # Appends
//
// Each step's events are appended with the state's version as the expected
// version, so the session actor never forks its stream. Whether a step's
// events go in one all-or-nothing append or as steps is chosen per step:
//
//   - all or nothing, always one append: a resume's decisions (with
//     run.resumed and the returns of denied and resolved calls), a cancel
//     (the cancelled returns and run.cancelled), and every step that fails
//     a run (model.response, usage.snapshot, run.failed) — a prefix of
//     those would run tools the run must not run, or half-decide;
//   - steps whose every prefix is a state the actor carries on from: the
//     toolset.* reports and model.request; model.response, tool.requested
//     (one per call) and usage.snapshot; model.response, usage.snapshot
//     and run.completed; the approval policy's returns; approval.requested
//     / deferred.requested and run.waiting. They go through
//     events.AppendSteps: on the JetStream store (whose all-or-nothing
//     appends of several events are atomic batches that cost milliseconds
//     on a single-replica file stream) a pipeline of fenced single-event
//     publishes with one wait for their acknowledgements, one round trip
//     per step, which may store a prefix only; on the others one append.
//
// Fused appends (session_fuse.go): a decision that only appends events
// the run carries on from at once (split, or a single event; its only
// effect the answer to a command) is applied to the state before its
// append, and its events go in the same events.AppendSteps as the next
// decision's. A one-call run appends [run.started, model.request],
// [model.response, tool.requested, usage.snapshot], [tool.started,
// tool.returned, model.request] (tool.started alone when the actor reads
// it before the call returns) and [model.response, usage.snapshot,
// run.completed]: four or five round trips on JetStream instead of six.
// The trade-off: nothing leaves the actor before the held events are
// stored (every effect but a preparation of loose tools, which the actor
// builds itself, appends them first, and so does the end of each message),
// and a command is answered once the fused append is acknowledged, with
// the version after its own events. When the fused append fails, the
// actor reads its stream again (JetStream may have stored a prefix; the
// held events are applied already) and answers the held command with the
// error: a start so refused is retried by its caller with its run id,
// which is idempotent (TestFusedAppendFailure). A store refusing the
// fused append as too large gets the held events alone, then the rest.
// An all-or-nothing append of several events is never fused.
//
// A step that stopped part way (the process died, or an append
// failed) is completed from the state before anything else happens: the
// fold keeps the last response's tool calls (RunState.Calls) and the usage
// it implies (RunState.UsageDue), and the actor appends the tool.requested
// of the calls that have none, in model order, then the usage.snapshot.
// Reports and model.request need no completion (the model request is
// repeated; toolsets are prepared again), nor do approval.requested and
// run.waiting (the batch is looked at again). model.response is the event
// that commits the model's answer: a response with no calls makes the run
// final (run.completed follows), one with calls defines the batch.
//
// The session actor folds the typed values it has just appended instead of
// decoding their JSON; events read from the log are decoded
// (SessionState.Apply). Both give the same state.
//
// Limits (nil: no limit; 0: none allowed): Limits.Requests is checked
// before each model request; Limits.ToolCalls for a whole response before
// any call starts (the run fails with usage_limit_exceeded and no
// tool.requested is recorded).
// InvalidArguments and ModelRetry returns go back to the model as retry
// prompts carrying the run's retry count for the tool; a tool may be
// retried MaxAttempts-1 times per run (its resolved max retries); one more
// fails the run with tool_retry_limit_exceeded. The count so far
// (RunState.Retries, a fold of the run's tool.returned events) travels with
// each call as ToolRequest.ModelRetries and reaches the tool as
// toolsets.ToolContext.ModelRetries. A call whose arguments are not valid
// JSON is refused where the batch is scheduled, before the approval policy
// and without reaching a tool actor (Registry.Refusal: invalid_arguments,
// "the arguments are not valid JSON"), and counts like any invalid
// arguments; its tool.requested keeps the text as raw_arguments. A
// response that breaks the port's rules otherwise (a call without an id or
// a name, duplicate ids) fails the run with invalid_response. Unknown and
// hidden tools go back as retry prompts (not_found, not_exposed). A tool
// call when the agent has no tools fails the run with no_tools.
//
// # Human in the loop
//
// A call whose return is approval_required, call_deferred or
// elicitation_required — raised by the tool, or by the agent's approval
// policy (AgentSpec.ApprovalRequired, checked before the call runs) — is
// pending. Once nothing else of the batch runs, the session appends
// approval.requested / deferred.requested / elicitation.requested for each
// pending call and run.waiting; the batch's other returns are
// kept. A pending item's id is its tool call id (stable across restarts,
// unique among the run's pending items).
//
// A resume must decide every pending item exactly once, with a decision
// that fits it; otherwise it is refused and nothing is recorded or run. It
// appends approval.decided / deferred.resolved (who decided is in the data,
// when in the event time), run.resumed, and tool.returned for denied calls
// (a feedback return telling the model who denied it and why) and for
// resolved deferred calls (complete: success with the result as content;
// fail: an execution error). Approved calls then run again, once, with the
// approval in ToolContext.Approval (and the reviewed arguments, if any); the
// policy does not stop an approved call. An elicitation is decided by an
// answer (action "answer", result {"action": "accept"|"decline"|"cancel",
// "content"}), checked against the schema it asked for
// (toolsets.CheckElicitAnswer; one that does not fit is refused as
// wrong_decision); it appends elicitation.answered, and the call runs
// again with the answer and its request in ToolContext.Elicitation. The
// question and the answer are in the log, so an answer from any node, or
// after a restart, resumes the call. A resumed run re-prepares its
// toolsets.
//
// # Cancellation
//
// A cancel appends a tool.returned of kind cancelled for every call of the
// batch that has no final return, and run.cancelled, in one append; then it
// cancels the run's context, so running tools see ctx.Done and
// ToolContext.IsCancelled. Late returns of cancelled calls are dropped.
//
// # Recovery
//
// A session actor rebuilds its state from its stream when it starts
// (Host.Recover starts the sessions whose last run is running, reading the
// whole log once; Host.WatchLeases starts one such session of a node that
// stopped driving it, reading only its stream; a command for any other
// session starts its actor); if the read fails, the next command or
// advance reads again (see PROTOCOL, unavailable). A run is running from
// its run.started or run.resumed until its run.waiting, run.completed,
// run.failed or run.cancelled: one rule for both. Then:
//   - a waiting run stays waiting and can be resumed;
//   - a run waiting for its model repeats the model request;
//   - a tool call requested (or started) but not returned is run again,
//     at least once, with the same call id: tools with side effects should
//     treat (SessionID, RunID, CallID) of their ToolContext as an
//     idempotency key (call ids are unique only within a run);
//   - toolsets are prepared again (toolset.initialized is recorded again).
//
// Cancellation of tools reaches the tool actors of this process through
// the run's context, and remote tool workers through
// weft.worker.cancel.<session id>.<run id>.<call id>, which the batch's
// scheduler publishes for every open remote call when it stops.
//
// # Ownership
//
// A single host (HostConfig.Leases nil: the embedded server, which no
// other process reaches) acts on every command it receives. Hosts of a
// cluster (weft.Start on a NATS URL, including weft serve on its own
// listening embedded server) are nodes: at most one node drives a session
// at a time, the holder of its lease.
//
//   - The lease is a key of the JetStream KV bucket weft_leases (the
//     session id, base64url) whose value is {"node": <node id>}. A node
//     takes it with create-if-absent, or renews it with update at the
//     revision it last wrote (compare-and-set). The bucket's max age is
//     the lease TTL (LeaseConfig.TTL, default 10 s), so the server's
//     clock expires a lease TTL after its last write; clocks of the nodes
//     play no part.
//   - A node takes a session's lease when a command for it arrives, or
//     when Recover or the lease watcher finds its run running and nobody
//     holds the lease. It renews every lease it holds every TTL/3 while
//     the session's actor lives in the node (waiting sessions included),
//     each renewal given up after TTL/3 (an answer lost with a server that
//     died is not waited for: the next tick renews through the reconnected
//     connection before the lease expires), and releases them (delete at
//     its revision) when the host closes cleanly. A host closing while its
//     connection is down does not wait to release them: they expire by
//     their TTL.
//   - Commands are served in queue group weft-cmd: each reaches one node.
//     A node that does not hold the lease of a session leased by another
//     forwards the command, unchanged, as a request to
//     weft.node.<owner>.cmd.session.<id>.<verb> and relays the owner's
//     answer to the caller. If the owner has lost the lease meanwhile it
//     answers session_owned. If no process serves that subject (the owner
//     died, or was killed and restarted under another node id, before its
//     lease expired), NATS tells the forwarding node at once and it
//     answers session_owned, naming the owner: nothing was recorded. The
//     caller retries session_owned: within a TTL the lease expires and the
//     next command is taken by a live node. A node's own Host.Command
//     takes or checks the lease itself: it hands the command to the
//     session's actor when this node holds the lease, and sends it
//     straight to weft.node.<owner>.… otherwise (same answers, same
//     session_owned when nobody serves it). Only an owner that is alive
//     but does not answer within 65 s (its lease check, then its session
//     actor's read and append) leaves the caller to its own timeout.
//   - A node's id is its identity in the leases (LeaseConfig.NodeID): a
//     process restarted under the id of the one that died holds that one's
//     leases still and drives its sessions at once. weft serve on its
//     embedded server keeps its id in the data directory (DIR/node-id);
//     on external NATS, give a restarted node its --node-id again.
//   - Takeover: a node that takes an expired lease rebuilds the session
//     from its stream (ReadSession) like any restarted actor (see
//     Recovery): a waiting run is resumed by the next command; a running
//     run is carried on by the lease watcher (Host.WatchLeases; weft serve
//     runs it on a cluster, after one Recover at start for the leases that
//     ended while no node watched). The watcher follows the bucket: a lease
//     ends when it is deleted (a clean release: the takeover is immediate)
//     or when it expires. The bucket has limit markers (LimitMarkerTTL,
//     nats-server 2.11 and later; at least 1 s): the server writes a delete
//     marker when it expires a lease, which the watchers hear a little
//     after the TTL. On a server that refuses them, the watcher keeps a
//     timer per lease (its last write + TTL) and then asks the bucket
//     whether the key is gone. For each ended lease of a session it does
//     not drive, a watching node reads that session's stream only and, if
//     its last run is running, takes the lease (create-if-absent: of the
//     nodes racing for it, one wins; the others find it held and do
//     nothing) and sends the actor an advance, as Recover does. Every
//     watching node reads the stream of every ended lease once.
//   - The fence: every append still carries the state's version as the
//     expected version. A node that still believes it owns a session after
//     its lease moved (a pause longer than the TTL) cannot fork it: its
//     next append fails with a wrong expected version, the actor reloads
//     the stream, stands down (appends nothing more, refuses commands with
//     session_owned, stops) and stops renewing the lease. A renewal that
//     finds the lease taken stands the actor down as well. Side effects of
//     the stood-down node's in-flight tool calls are not fenced: tools
//     keep treating (SessionID, RunID, CallID) as an idempotency key.
package actors
