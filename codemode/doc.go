// Package codemode lets an agent act by writing programs: the system tool
// run_code ([NewTool]) runs a Starlark program (go.starlark.net: a
// deterministic, sandboxed dialect of Python) against the job's context —
// live application objects the host registered ([Env.Objects], through
// [Object] or [Struct]), plain values ([Env.Values]), the variables the
// job's earlier programs left, and the agent's tools as functions with
// positional and keyword arguments ([Env.Tools]). print output and the
// value of the last expression are the tool's return ([Summary], values
// shown by [Render]).
//
// # Durable by replay
//
// A program never runs a tool itself. [Env.Run] runs it against a journal
// — the returns of the calls it made so far, from the log — and stops at
// the first call without a recorded return ([Outcome].Call). run_code then
// asks the runtime for that call (a deferred return carrying
// toolsets.MetaCodeCall); the runtime records it as a child of the code
// call (id "<code call>.<n>"), runs it like any call — validation, the
// approval policy, deferral, retries, its own events — and runs the
// program again from the start with the longer journal. A program that
// stops for an approval, a deferred result, a crash or a takeover resumes
// the same way, and a recorded call never runs twice. A replay that calls
// another tool where the journal recorded one is a [*DivergenceError]
// (names and order are compared; reads of host objects are live, so a
// program that branches on them may diverge).
//
// # Variables
//
// A finished program's globals are kept for the job's later programs
// ([Outcome].State, recorded with the code call's return): values that
// serialise as JSON, host objects as handles (the name they are registered
// under, bound again by that name), and, for the rest, the reason they
// could not be kept, which the model is told.
//
// # Limits and the sandbox
//
// [MaxSource], [MaxSteps], [MaxOutput], [MaxWall] and [MaxAllocBytes]
// bound a run; the context's end cancels the Starlark thread. A program
// sees the Starlark universe (no load, files, clock or environment), the
// host's names and the visible tools; naming a hidden tool refuses the
// program before anything runs ([ErrRefused]); an unknown name is a
// NameError naming the closest names.
//
// [NewDocstrTool] is the system tool docstr, which describes a tool or an
// object ([Env.Describe]); programs have it as the function docstr.
package codemode
