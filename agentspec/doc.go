// Package agentspec declares agents in a YAML file, so that a weft node
// can host a team's own agents without a Go program: each agent's model
// (openai:, anthropic:, or openai-compatible: with a base URL; keys by
// environment variable name only), instructions, settings, limits,
// retries and fallbacks, toolsets (remote worker tools, MCP servers,
// filesystem and shell over a root, tool search or proxy over those) and
// approval policy (approval_required, trusted_tools: the selectors of
// weft.AgentConfig).
//
// Load or Parse reads a file, validates it against Schema (the JSON
// Schema committed as agents.schema.json) and checks it; File.Register
// registers its agents on a runtime, with Go tools added by agent name.
// Every error is an *Error naming the file, the line and the field, and
// none holds a secret: the file names environment variables, and an error
// names a variable, never its value.
//
//	f, err := agentspec.Load("agents.yaml")
//	...
//	hosted, err := f.Register(ctx, rt, map[string][]toolsets.Tool{"support": {lookup}})
//	...
//	defer hosted.Close()
//	res, err := hosted.Agent("support").Run(ctx, "Fix ticket T-7.")
//
// Each agent has a version (File.AgentVersion, a hash of its declaration) that
// its runs record in run.started (metadata MetaVersion). File.Reload hosts a
// changed file in place of the one registered: it builds every added and
// changed agent before it registers any, as new versions of their names
// (new runs start with them, each run keeps the version it recorded), and
// retires removed agents; a file that fails changes nothing.
package agentspec
