// Package projections builds disposable views of the event log: the log is
// the truth, and every view here can be dropped and rebuilt from position 0.
//
// A Projection folds decoded events (Decoded) idempotently: it keeps the
// Position of the last event it applied (its checkpoint) and ignores any
// event at or below it. A Runner keeps projections up to date with a log
// (events.Reader and events.Subscriber): CatchUp reads from the lowest
// checkpoint to the end with ReadAll, Follow then stays live with
// Subscribe, Rebuild resets and replays from 0. WithProgress reports
// counts as it goes, for progress bars.
//
// The views:
//
//   - Archive: per session, the messages as recorded (model.request and
//     model.response), the runs with their statuses, outputs, errors and
//     usage (run.*, usage.snapshot), pending approvals and deferred calls,
//     the toolsets the runs prepared (toolset.*), the required toolsets and
//     the tools loaded by tool search (tool_search.loaded, or tool.progress
//     named tool_search.loaded).
//   - Queue: the HITL queue across sessions, every pending approval and
//     deferred call with tool, arguments, reason and age at an injected
//     clock (WithClock). A refused resume (decision.refused) leaves the
//     queue as it was: the items it named still wait. A sub-run's item
//     (an agent called as a tool) carries its chain of parent calls.
//   - Tree: every run with the sub-runs it started (run.started's parent
//     fields), nested, and their statuses; weft show prints a session's.
//   - Audit: per session, one line per event: time, type, call id, tool and
//     kind or outcome; a refused resume's line says who tried, the refusal's
//     code and why, so the timeline shows attempted decisions too.
//
// Each renders as deterministic JSON (Render), so two views of the same
// events compare byte for byte. Projections are not safe for concurrent
// use: the Runner's goroutine is their only writer.
package projections
