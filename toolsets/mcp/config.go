package mcp

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"time"

	"github.com/weft-run/weft/toolsets"
)

// ErrConfig reports a configuration that cannot serve: a missing name or
// transport, an invalid URL, a duplicate declared tool. [*ConfigError]
// matches it.
var ErrConfig = errors.New("mcp: invalid configuration")

// ConfigError names the server and the field at fault.
type ConfigError struct {
	Server string
	Field  string
	Reason string
}

func (e *ConfigError) Error() string {
	return fmt.Sprintf("mcp server %q: %s: %s", e.Server, e.Field, e.Reason)
}

// Is matches [ErrConfig].
func (e *ConfigError) Is(target error) bool { return target == ErrConfig }

// TransportKind is how weft reaches a server. The set is closed.
type TransportKind string

// The transports.
const (
	// KindStdio runs a local command and speaks MCP over its stdin/stdout.
	KindStdio TransportKind = "stdio"
	// KindStreamableHTTP posts to a streamable HTTP endpoint.
	KindStreamableHTTP TransportKind = "streamable_http"
	// KindSSE is the legacy HTTP+SSE transport of protocol 2024-11-05.
	KindSSE TransportKind = "sse"
)

// Transport is a server's transport; build it with [Stdio],
// [StreamableHTTP] or [SSE].
type Transport struct {
	Kind TransportKind
	// Command, Args, Env and Dir are the stdio command: the program, its
	// arguments, the environment it gets besides [InheritedEnv] (values
	// read from the process environment, see [Value]) and its working
	// directory ("" = the current one).
	Command string
	Args    []string
	Env     map[string]Value
	Dir     string
	// URL is the HTTP endpoint (streamable HTTP or SSE).
	URL string
}

// Stdio is the transport of a local command.
func Stdio(command string, args ...string) Transport {
	return Transport{Kind: KindStdio, Command: command, Args: args}
}

// StreamableHTTP is the transport of a streamable HTTP endpoint.
func StreamableHTTP(url string) Transport { return Transport{Kind: KindStreamableHTTP, URL: url} }

// SSE is the legacy HTTP+SSE transport (older servers). The SDK serves
// it; prefer [StreamableHTTP] where the server offers both.
func SSE(url string) Transport { return Transport{Kind: KindSSE, URL: url} }

// WithEnv returns t with the environment variable name set to v for the
// command (stdio only).
func (t Transport) WithEnv(name string, v Value) Transport {
	env := make(map[string]Value, len(t.Env)+1)
	for k, x := range t.Env {
		env[k] = x
	}
	env[name] = v
	t.Env = env
	return t
}

// WithDir returns t with the command's working directory set.
func (t Transport) WithDir(dir string) Transport { t.Dir = dir; return t }

// InheritedEnv are the variables a stdio server inherits from weft's
// environment; every other variable must be given in [Transport.Env], so
// that weft's credentials do not leak into servers by default.
var InheritedEnv = []string{"HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER", "LANG", "LC_ALL", "TMPDIR", "TZ"}

// Config is one MCP server, as the seed's McpToolset takes it.
type Config struct {
	// Name is the server's name: the toolset's name and the "mcp:<name>"
	// group of its instructions. Required; a valid toolsets name.
	Name string
	// ID is the toolset's stable id ("" = Name, reported as implicit).
	ID        string
	Transport Transport
	// Headers are sent on every HTTP request; their values are read from
	// the environment when a session opens and never recorded.
	Headers map[string]Value
	// ToolPrefix, when set, exposes each tool as "<prefix>_<name>"; empty
	// means the server's names. Characters a weft name does not allow
	// become '_'; the original name stays in the metadata (MetaTool).
	ToolPrefix string
	// IncludeInstructions renders instructions under "mcp:<name>":
	// Instructions when set, else (live mode) the server's own.
	IncludeInstructions bool
	Instructions        string
	// Tools are declared tools. Deferred mode offers exactly these; live
	// mode offers them instead of listing when UseDeclaredTools is set,
	// and otherwise combines their annotations, metadata and timeouts with
	// the listed tools of the same name.
	Tools     []ToolSpec
	Resources []ResourceSpec
	Prompts   []PromptSpec
	// UseDeclaredTools: live mode calls the declared tools without
	// listing the server's.
	UseDeclaredTools bool
	// Timeout is the default per-attempt timeout of the tools (0: the
	// registry's).
	Timeout time.Duration
	// CallTimeout is the deadline of a call that has none otherwise (no
	// tool, toolset or agent timeout), so that no call waits forever on a
	// server that never answers; 0 means DefaultCallTimeout.
	CallTimeout time.Duration
	// RequestTimeout bounds every request that is not a tool call
	// (connect and initialize, tools/list); 0 means DefaultRequestTimeout.
	RequestTimeout time.Duration
	// Shared keeps one session for the whole process instead of one per
	// run; Close ends it.
	Shared bool
	// TrustDestructive opts out of the approval that destructive tools
	// need by default (see the package documentation).
	TrustDestructive bool
	// Lifecycle is the toolset's lifecycle policy (timeouts, whether an
	// unavailable server fails the run).
	Lifecycle toolsets.LifecyclePolicy
}

// DefaultRequestTimeout bounds the requests that are not tool calls.
const DefaultRequestTimeout = 30 * time.Second

// DefaultCallTimeout is the deadline of a call that has no other.
const DefaultCallTimeout = 10 * time.Minute

// ToolSpec declares a tool: its MCP name, schema, description, metadata
// and policy.
type ToolSpec struct {
	// Name is the tool's name on the server.
	Name        string
	Description string
	// Parameters is the JSON Schema of the arguments; nil means an object
	// with any properties.
	Parameters  json.RawMessage
	Metadata    map[string]any
	Annotations *Annotations
	// Sequential keeps the tool's calls in model order (never loosened by
	// a readOnlyHint).
	Sequential bool
	// ApprovalRequired makes every call wait for approval (never loosened
	// by a destructiveHint of false).
	ApprovalRequired bool
	Timeout          time.Duration
}

// Annotations are MCP tool annotations (hints). A nil pointer is unset.
type Annotations struct {
	ReadOnly    *bool `json:"readOnlyHint,omitempty"`
	Destructive *bool `json:"destructiveHint,omitempty"`
	Idempotent  *bool `json:"idempotentHint,omitempty"`
	OpenWorld   *bool `json:"openWorldHint,omitempty"`
}

// Hint returns a pointer to b, for [Annotations] literals.
func Hint(b bool) *bool { return &b }

// ResourceSpec declares a resource the server offers.
type ResourceSpec struct {
	URI         string
	Name        string
	Description string
	MIMEType    string
	Metadata    map[string]any
}

// PromptSpec declares a prompt the server offers.
type PromptSpec struct {
	Name        string
	Description string
	Arguments   []PromptArgument
}

// PromptArgument is one argument of a prompt.
type PromptArgument struct {
	Name        string
	Description string
	Required    bool
}

// Definition metadata keys of MCP tools.
const (
	// MetaServer names the server.
	MetaServer = "mcp_server"
	// MetaTransport is the transport kind (stdio, streamable_http, sse).
	MetaTransport = "mcp_transport"
	// MetaTool is the tool's name on the server.
	MetaTool = "mcp_tool"
)

// validate checks c as [New] and [NewDeferred] need it.
func (c *Config) validate() error {
	bad := func(field, reason string) error { return &ConfigError{Server: c.Name, Field: field, Reason: reason} }
	if err := toolsets.ValidateName(c.Name); err != nil {
		return bad("Name", err.Error())
	}
	if err := c.Lifecycle.Validate(); err != nil {
		return bad("Lifecycle", err.Error())
	}
	if c.Timeout < 0 || c.RequestTimeout < 0 || c.CallTimeout < 0 {
		return bad("Timeout", "negative")
	}
	t := c.Transport
	switch t.Kind {
	case KindStdio:
		if t.Command == "" {
			return bad("Transport.Command", "empty")
		}
	case KindStreamableHTTP, KindSSE:
		u, err := url.Parse(t.URL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return bad("Transport.URL", "not an http or https URL")
		}
		if len(t.Env) > 0 || t.Command != "" {
			return bad("Transport.Env", "an HTTP transport has no command or environment")
		}
	case "":
		return bad("Transport", "none (use Stdio, StreamableHTTP or SSE)")
	default:
		return bad("Transport.Kind", fmt.Sprintf("unknown %q", t.Kind))
	}
	if len(c.Headers) > 0 && t.Kind == KindStdio {
		return bad("Headers", "a stdio transport sends no headers")
	}
	for k, v := range c.Headers {
		if err := v.check(); err != nil {
			return bad("Headers["+k+"]", err.Error())
		}
	}
	for k, v := range t.Env {
		if err := v.check(); err != nil {
			return bad("Transport.Env["+k+"]", err.Error())
		}
	}
	if c.ToolPrefix != "" {
		if err := toolsets.ValidateName(c.ToolPrefix); err != nil {
			return bad("ToolPrefix", err.Error())
		}
	}
	if c.UseDeclaredTools && len(c.Tools) == 0 {
		return bad("UseDeclaredTools", "no declared tools")
	}
	seen := map[string]bool{}
	for i, s := range c.Tools {
		if s.Name == "" {
			return bad(fmt.Sprintf("Tools[%d].Name", i), "empty")
		}
		if seen[s.Name] {
			return bad(fmt.Sprintf("Tools[%d].Name", i), fmt.Sprintf("%q declared twice", s.Name))
		}
		seen[s.Name] = true
		if len(s.Parameters) > 0 && !json.Valid(s.Parameters) {
			return bad(fmt.Sprintf("Tools[%d].Parameters", i), "not JSON")
		}
		if s.Timeout < 0 {
			return bad(fmt.Sprintf("Tools[%d].Timeout", i), "negative")
		}
	}
	uris := map[string]bool{}
	for i, r := range c.Resources {
		if r.URI == "" || uris[r.URI] {
			return bad(fmt.Sprintf("Resources[%d].URI", i), "empty or declared twice")
		}
		uris[r.URI] = true
	}
	prompts := map[string]bool{}
	for i, p := range c.Prompts {
		if p.Name == "" || prompts[p.Name] {
			return bad(fmt.Sprintf("Prompts[%d].Name", i), "empty or declared twice")
		}
		prompts[p.Name] = true
	}
	return nil
}

func (c *Config) requestTimeout() time.Duration {
	if c.RequestTimeout > 0 {
		return c.RequestTimeout
	}
	return DefaultRequestTimeout
}

func (c *Config) callTimeout() time.Duration {
	if c.CallTimeout > 0 {
		return c.CallTimeout
	}
	return DefaultCallTimeout
}

func (c *Config) spec(name string) (ToolSpec, bool) {
	for _, s := range c.Tools {
		if s.Name == name {
			return s, true
		}
	}
	return ToolSpec{}, false
}

// group is the instructions group of the server.
func (c *Config) group() string { return "mcp:" + c.Name }
