package agentspec

import "time"

// File is a loaded spec file: the agents it declares. Build it with Load
// or Parse; register its agents with Register.
type File struct {
	// Version is the format's version; 1 is the only one.
	Version int `yaml:"version" json:"version"`
	// RateLimits are client-side budgets per provider ("openai",
	// "anthropic", "openai-compatible"), each shared by every model of
	// that provider in the file.
	RateLimits map[string]RateLimit `yaml:"rate_limits" json:"rate_limits,omitempty"`
	Agents     []Agent              `yaml:"agents" json:"agents"`

	name  string         // the file's name, for errors
	dir   string         // the directory relative roots are resolved in
	lines map[string]int // field path -> line
}

// Agent declares one agent.
type Agent struct {
	// Name is the agent's name on the runtime (required, unique in the
	// file).
	Name         string   `yaml:"name" json:"name"`
	Description  string   `yaml:"description" json:"description,omitempty"`
	Model        Model    `yaml:"model" json:"model"`
	Instructions []string `yaml:"instructions" json:"instructions,omitempty"`
	Settings     Settings `yaml:"settings" json:"settings,omitzero"`
	Limits       Limits   `yaml:"limits" json:"limits,omitzero"`
	// Toolsets are the agent's toolsets, in order.
	Toolsets []Toolset `yaml:"toolsets" json:"toolsets,omitempty"`
	// ApprovalRequired and TrustedTools are weft.AgentConfig's
	// ApprovalRequiredTools and TrustedTools: tool, toolset or bundle
	// selectors, or "*".
	ApprovalRequired []string `yaml:"approval_required" json:"approval_required,omitempty"`
	TrustedTools     []string `yaml:"trusted_tools" json:"trusted_tools,omitempty"`
	// ToolTimeout and ToolRetries are the per-attempt timeout and retry
	// budget of tools that set none (AgentConfig.Timeout, MaxRetries).
	ToolTimeout Duration `yaml:"tool_timeout" json:"tool_timeout,omitempty"`
	ToolRetries *int     `yaml:"tool_retries" json:"tool_retries,omitempty"`
	// AgentTools names agents of this file the agent may call as tools
	// (weft.AgentTool): each call runs the named agent as a sub-run. An
	// undeclared name, the agent itself or a cycle is refused.
	AgentTools []string `yaml:"agent_tools" json:"agent_tools,omitempty"`
}

// Model is an agent's model, with its retries and fallbacks.
type Model struct {
	// Name is PROVIDER:MODEL ("openai:gpt-4.1-mini",
	// "anthropic:claude-sonnet-4-5", "openai-compatible:llama3").
	Name string `yaml:"name" json:"name"`
	// BaseURL is the API's base URL: required for openai-compatible.
	BaseURL string `yaml:"base_url" json:"base_url,omitempty"`
	// APIKeyEnv names the environment variable that holds the key
	// (default: OPENAI_API_KEY, ANTHROPIC_API_KEY; none for
	// openai-compatible). The key itself is never in the file.
	APIKeyEnv string `yaml:"api_key_env" json:"api_key_env,omitempty"`
	// Stream false sends ordinary (non-streamed) requests: for
	// OpenAI-compatible servers whose streamed tool calls are broken
	// (openai and openai-compatible only; default true).
	Stream *bool `yaml:"stream" json:"stream,omitempty"`
	// Retry is the model's retry policy (nil: resilient's defaults).
	Retry *Retry `yaml:"retry" json:"retry,omitempty"`
	// Fallbacks are asked in order when the model fails.
	Fallbacks []ModelRef `yaml:"fallbacks" json:"fallbacks,omitempty"`
}

// ModelRef is a fallback model: a Model without fallbacks of its own.
type ModelRef struct {
	Name      string `yaml:"name" json:"name"`
	BaseURL   string `yaml:"base_url" json:"base_url,omitempty"`
	APIKeyEnv string `yaml:"api_key_env" json:"api_key_env,omitempty"`
	Stream    *bool  `yaml:"stream" json:"stream,omitempty"`
	Retry     *Retry `yaml:"retry" json:"retry,omitempty"`
}

// Retry is a model's retry policy (llm/resilient.Retry); zero fields keep
// resilient's defaults. MaxAttempts 1 turns retries off.
type Retry struct {
	MaxAttempts  int      `yaml:"max_attempts" json:"max_attempts,omitempty"`
	MaxElapsed   Duration `yaml:"max_elapsed" json:"max_elapsed,omitempty"`
	InitialDelay Duration `yaml:"initial_delay" json:"initial_delay,omitempty"`
	MaxDelay     Duration `yaml:"max_delay" json:"max_delay,omitempty"`
	Multiplier   float64  `yaml:"multiplier" json:"multiplier,omitempty"`
	Jitter       *float64 `yaml:"jitter" json:"jitter,omitempty"`
}

// RateLimit is a provider's client-side budget (resilient.NewLimiter);
// 0 means no bound of that kind.
type RateLimit struct {
	RequestsPerMinute int `yaml:"requests_per_minute" json:"requests_per_minute,omitempty"`
	TokensPerMinute   int `yaml:"tokens_per_minute" json:"tokens_per_minute,omitempty"`
}

// Settings are the generation settings of every request (llm.Settings).
type Settings struct {
	Temperature *float64 `yaml:"temperature" json:"temperature,omitempty"`
	TopP        *float64 `yaml:"top_p" json:"top_p,omitempty"`
	MaxTokens   int      `yaml:"max_tokens" json:"max_tokens,omitempty"`
	Stop        []string `yaml:"stop" json:"stop,omitempty"`
	Seed        *int64   `yaml:"seed" json:"seed,omitempty"`
}

// Limits bound each run (weft.UsageLimits); an absent field is no limit,
// 0 allows none.
type Limits struct {
	Requests     *int64 `yaml:"requests" json:"requests,omitempty"`
	ToolCalls    *int64 `yaml:"tool_calls" json:"tool_calls,omitempty"`
	InputTokens  *int64 `yaml:"input_tokens" json:"input_tokens,omitempty"`
	OutputTokens *int64 `yaml:"output_tokens" json:"output_tokens,omitempty"`
	TotalTokens  *int64 `yaml:"total_tokens" json:"total_tokens,omitempty"`
}

// Toolset is one toolset of an agent: exactly one of its fields is set.
type Toolset struct {
	Remote     *Remote     `yaml:"remote" json:"remote,omitempty"`
	MCP        *MCP        `yaml:"mcp" json:"mcp,omitempty"`
	Filesystem *Filesystem `yaml:"filesystem" json:"filesystem,omitempty"`
	Shell      *Shell      `yaml:"shell" json:"shell,omitempty"`
	Search     *Search     `yaml:"search" json:"search,omitempty"`
	Proxy      *Proxy      `yaml:"proxy" json:"proxy,omitempty"`
}

// Remote is the tools of remote workers, by name (weft.Runtime.RemoteTools):
// a tool served by a pool goes through the pool's queue.
type Remote struct {
	Tools []string `yaml:"tools" json:"tools"`
	// Wait bounds how long Register waits for workers to describe the
	// tools (default 10s).
	Wait Duration `yaml:"wait" json:"wait,omitempty"`
}

// MCP is an MCP server (toolsets/mcp): a stdio command or an HTTP URL.
type MCP struct {
	Name    string   `yaml:"name" json:"name"`
	ID      string   `yaml:"id" json:"id,omitempty"`
	Command string   `yaml:"command" json:"command,omitempty"`
	Args    []string `yaml:"args" json:"args,omitempty"`
	// Env maps the command's variables to the names of weft's
	// environment variables that hold their values.
	Env map[string]string `yaml:"env" json:"env,omitempty"`
	// Dir is the command's working directory (relative to the spec
	// file's; "" = weft's).
	Dir string `yaml:"dir" json:"dir,omitempty"`
	URL string `yaml:"url" json:"url,omitempty"`
	// Transport is streamable_http (default for a URL) or sse.
	Transport string `yaml:"transport" json:"transport,omitempty"`
	// Headers are HTTP headers whose values come from the environment.
	Headers    map[string]Header `yaml:"headers" json:"headers,omitempty"`
	ToolPrefix string            `yaml:"tool_prefix" json:"tool_prefix,omitempty"`
	// Mode is live (default: weft connects and lists the tools) or
	// deferred (the declared tools; a call waits for the host).
	Mode             string    `yaml:"mode" json:"mode,omitempty"`
	Tools            []MCPTool `yaml:"tools" json:"tools,omitempty"`
	Shared           bool      `yaml:"shared" json:"shared,omitempty"`
	TrustDestructive bool      `yaml:"trust_destructive" json:"trust_destructive,omitempty"`
	Timeout          Duration  `yaml:"timeout" json:"timeout,omitempty"`
}

// Header is an HTTP header's value: Prefix then the value of the
// environment variable Env.
type Header struct {
	Env    string `yaml:"env" json:"env"`
	Prefix string `yaml:"prefix" json:"prefix,omitempty"`
}

// MCPTool declares a tool of an MCP server.
type MCPTool struct {
	Name             string         `yaml:"name" json:"name"`
	Description      string         `yaml:"description" json:"description,omitempty"`
	Parameters       map[string]any `yaml:"parameters" json:"parameters,omitempty"`
	ApprovalRequired bool           `yaml:"approval_required" json:"approval_required,omitempty"`
}

// Filesystem is the filesystem toolset over a host directory (relative
// roots are resolved in the spec file's directory).
type Filesystem struct {
	Root            string `yaml:"root" json:"root"`
	Name            string `yaml:"name" json:"name,omitempty"`
	ReadOnly        bool   `yaml:"read_only" json:"read_only,omitempty"`
	WithoutApproval bool   `yaml:"without_approval" json:"without_approval,omitempty"`
}

// Shell is the shell toolset over a host directory.
type Shell struct {
	Root            string   `yaml:"root" json:"root"`
	Name            string   `yaml:"name" json:"name,omitempty"`
	AllowedPrograms []string `yaml:"allowed_programs" json:"allowed_programs,omitempty"`
	InheritEnv      []string `yaml:"inherit_env" json:"inherit_env,omitempty"`
	Timeout         Duration `yaml:"timeout" json:"timeout,omitempty"`
	WithoutApproval bool     `yaml:"without_approval" json:"without_approval,omitempty"`
}

// Search is a tool search over toolsets: the model sees one tool and
// loads the ones a search matches.
type Search struct {
	Name       string    `yaml:"name" json:"name,omitempty"`
	MaxResults int       `yaml:"max_results" json:"max_results,omitempty"`
	Over       []Toolset `yaml:"over" json:"over"`
}

// Proxy is a tool proxy over toolsets: a search tool and a call tool.
type Proxy struct {
	Prefix     string    `yaml:"prefix" json:"prefix,omitempty"`
	MaxResults int       `yaml:"max_results" json:"max_results,omitempty"`
	Over       []Toolset `yaml:"over" json:"over"`
}

// Duration is a Go duration written as a string ("30s", "2m").
type Duration time.Duration
