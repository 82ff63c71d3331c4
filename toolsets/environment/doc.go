// Package environment is the port of weft's environment toolsets: the
// filesystem and the shell an agent works in, the policies that bound
// them, and the record of every effect they have.
//
// A provider implements [FileSystem], [Shell] or both ([Provider]).
// Two ship with weft:
//
//   - environment/virtual: in-memory files and optional scripted shell
//     outputs, for tests and dry runs (the seed's
//     EnvironmentProvider.virtual(files=...));
//   - environment/local: a directory of the host, with every path
//     confined to it (os.Root) and commands run in it as process groups.
//
// The toolsets over them are toolsets/filesystem and toolsets/shell. An
// agent attaches a provider as its environment (weft.AgentConfig's
// Environment, which reaches the toolsets in the
// [toolsets.ToolsetContext]) or binds one to a toolset directly.
//
// # Paths
//
// Every name a provider takes is relative to its root, slash-separated
// ("src/main.go"; "" and "." are the root itself). An absolute name is
// accepted only when it lies inside the root; ".." that climbs above
// the root, an absolute name outside it, and a symbolic link that leads
// out of it are refused with [ErrOutsideRoot]. [Clean] is the lexical
// check both providers share; the local provider adds the checks only the
// filesystem can answer (links, device files, a link swapped in between
// a check and a use).
//
// # Policies
//
// A [FilePolicy] says whether reads and writes are allowed and caps
// their sizes; a [ShellPolicy] lists the programs a command may run (and
// then refuses shell scripts), bounds each command's time and output,
// and caps how many commands run at once. The providers enforce them, so
// a tool cannot get around them. Refusals are typed errors
// ([ErrDenied], [ErrTooLarge], [ErrProgramNotAllowed], …, inside a
// [*PathError] or [*CommandError]); [Refusal] gives the code the
// toolsets show the model.
//
// # Effects
//
// Every write and every command is recorded as an [Effect] in the
// public metadata of its tool's return (key [MetaEffect]), with the
// session, run and call it belongs to, so the tool.returned events of a
// session say what changed.
package environment
