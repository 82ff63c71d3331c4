package toolsets

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
)

// The proxy's tool names without a prefix.
const (
	ProxySearchToolName = "search_tool"
	ProxyCallToolName   = "call_tool"
)

// ProxyToolset routes the model through two fixed tools over a hidden
// [Library] (the seed's ToolProxyToolset): a search tool that describes
// matching tools (name, description, parameters) and a call tool that
// calls one by name. The library's tools never appear in the model's
// definitions. Build it with [NewProxy].
//
// A successful search records the matching tools (and a successful call
// its tool) as loaded in the session's [SearchState], as tool search
// does. Failures of the proxied tool come back as [Feedback] text the
// model can act on, with markup escaped; approval and deferral raised by
// the proxied tool (or a wrapper of it) come back as the same
// [ApprovalRequired] / [CallDeferred] error, so the run suspends as for a
// direct call, and the approved or resolved call reaches the tool. It is
// safe for concurrent use.
//
// Hidden tools are not in a library (see [NewLibrary]): the proxy neither
// finds nor calls them, and a call by a hidden tool's name is answered as
// for an unknown name. A proxied call is the model's: the tool's
// [ToolContext.Caller] is [CallerModel].
//
// Library tools named like a proxy tool (search_tool or call_tool, with
// or without the proxy's prefix) are left out: never found, loaded or
// called through the proxy, so a call of the proxy cannot reach another
// proxy's tool by name. The proxy's instruction names the toolset ids
// (namespaces) of the tools it reaches.
type ProxyToolset struct {
	*searchCore
	search, call Tool
}

var _ Toolset = (*ProxyToolset)(nil)

type proxySearchHit struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Toolset     string          `json:"toolset"`
	Parameters  json.RawMessage `json:"parameters"`
}

type proxyCallArgs struct {
	Name      string         `json:"name" jsonschema:"the name of a tool found with the search tool"`
	Arguments map[string]any `json:"arguments,omitempty" jsonschema:"the tool's arguments, matching its parameters"`
}

// NewProxy returns a proxy over lib whose search returns up to maxResults
// tools. With a prefix its tools are "{prefix}_search_tool" and
// "{prefix}_call_tool" and its toolset name is the prefix; the prefix must
// be a valid name short enough for both. It accepts [OnSearch] and
// [SearchName].
func NewProxy(lib *Library, prefix string, maxResults int, opts ...SearchOption) (*ProxyToolset, error) {
	name, searchName, callName := "tool_proxy", ProxySearchToolName, ProxyCallToolName
	if prefix != "" {
		name, searchName, callName = prefix, prefix+"_"+ProxySearchToolName, prefix+"_"+ProxyCallToolName
		if err := ValidateName(prefix); err != nil {
			return nil, fmt.Errorf("tool proxy: %w: prefix: %w", ErrInvalidWrapper, err)
		}
		if err := ValidateName(searchName); err != nil {
			return nil, fmt.Errorf("tool proxy: %w: prefix %q is too long: %w", ErrInvalidWrapper, prefix, err)
		}
	}
	reserved := []string{ProxySearchToolName, ProxyCallToolName, searchName, callName}
	c, err := newSearchCore(lib, maxResults, name, reserved, opts)
	if err != nil {
		return nil, err
	}
	p := &ProxyToolset{searchCore: c}
	p.search, err = NewContextFunc(searchName, p.doSearch, WithDescription(
		"Search the hidden tool library by keywords. Returns each matching tool's name, description and parameters; call one with "+callName+"."))
	if err != nil {
		return nil, err
	}
	p.call, err = NewContextFunc(callName, p.doCall, WithDescription(
		"Call a tool found with "+searchName+" by name, with arguments that match its parameters."))
	if err != nil {
		return nil, err
	}
	return p, nil
}

// Info returns the proxy's name and id (see [SearchID]).
func (p *ProxyToolset) Info() ToolsetInfo { return p.info() }

// Prepare returns the two proxy tools and an instruction that says how to
// use them and which namespaces (toolset ids) they reach; the first
// preparation of a session emits the initialized record.
func (p *ProxyToolset) Prepare(_ context.Context, tc *ToolsetContext) (Preparation, error) {
	if tc == nil {
		tc = &ToolsetContext{}
	}
	p.initialize(tc)
	text := fmt.Sprintf("Find tools with %s, then call them with %s.", p.search.Definition().Name, p.call.Definition().Name)
	if ns := p.namespaces(); len(ns) > 0 {
		text += " They reach the tools of these namespaces: " + strings.Join(ns, ", ") + "."
	} else {
		text += " The library has no tools."
	}
	return Preparation{Tools: []Tool{p.search, p.call}, Instructions: []Instruction{{Group: p.name, Text: text}}}, nil
}

func (p *ProxyToolset) doSearch(_ context.Context, tc *ToolContext, a searchArgs) ([]proxySearchHit, error) {
	q := strings.TrimSpace(a.Query)
	if q == "" {
		p.emit(tc, SearchRecord{Outcome: SearchFailed, Toolset: p.name, SessionID: tc.SessionID, RunID: tc.RunID, Query: a.Query, Error: "empty query"})
		return nil, Feedback("The search query is empty. Search again with words that describe the tool you need.")
	}
	hits := p.match(q)
	if len(hits) == 0 {
		p.emit(tc, SearchRecord{Outcome: SearchNoMatch, Toolset: p.name, SessionID: tc.SessionID, RunID: tc.RunID, Query: q})
		return nil, Feedback(escape(fmt.Sprintf("No tool matches %q. Try other words.", q)))
	}
	p.emit(tc, p.load(tc, q, hits))
	out := make([]proxySearchHit, len(hits))
	for i, t := range hits {
		out[i] = proxySearchHit{Name: t.def.Name, Description: t.def.Description, Toolset: t.info.ID, Parameters: t.def.Parameters}
	}
	return out, nil
}

func (p *ProxyToolset) doCall(ctx context.Context, tc *ToolContext, a proxyCallArgs) (any, error) {
	if strings.TrimSpace(a.Name) == "" {
		return nil, InvalidArguments("name", "the name of the tool to call is required",
			fmt.Sprintf("Set name to a tool found with %s.", p.search.Definition().Name))
	}
	t := p.byName[a.Name]
	if t == nil {
		return nil, Feedback(escape(fmt.Sprintf("There is no tool named %q in the library. Use %s to find one.", a.Name, p.search.Definition().Name)))
	}
	args, err := json.Marshal(a.Arguments)
	if err != nil || a.Arguments == nil {
		args = json.RawMessage(`{}`)
	}
	// The model asked for this call: the proxied tool sees CallerModel,
	// and the library holds no hidden tool to reach.
	inv := Invocation{
		CallID: tc.CallID, Name: a.Name, Arguments: args, Caller: CallerModel,
		RunID: tc.RunID, SessionID: tc.SessionID, ConversationID: tc.ConversationID,
		Metadata: tc.metadata, Deferred: tc.Deferred, Elicitation: tc.Elicitation, Emitter: tc.emitter,
		// The runtime counts model retries by the name the model called:
		// the proxy's call tool.
		ModelRetries: tc.ModelRetries,
	}
	if tc.Approval != nil {
		// The approval was given to this proxy call, whose reviewed
		// arguments (if any) already replaced a.
		ap := *tc.Approval
		ap.Arguments = nil
		inv.Approval = &ap
	}
	ret := p.lib.reg.Call(ctx, inv)
	switch ret.Kind {
	case KindSuccess:
		p.load(tc, "", []*libTool{t})
		res := Result{Metadata: ret.Metadata, PrivateMetadata: ret.PrivateMetadata}
		if len(ret.Content) > 0 {
			res.Content = ret.Content
		}
		if len(ret.ModelOverride) > 0 {
			res.ModelContent = ret.ModelOverride
		}
		return res, nil
	case KindApprovalRequired:
		return nil, ApprovalRequired(ret.Control.Reason, ret.Control.Metadata)
	case KindCallDeferred:
		return nil, CallDeferred(ret.Control.Reason, ret.Control.Metadata)
	case KindElicitationRequired:
		return nil, &ElicitationRequiredError{Message: ret.Control.Reason, Metadata: ret.Control.Metadata}
	case KindCancelled:
		return nil, &CancelledError{Reason: ret.Control.Message}
	}
	var text string
	if json.Unmarshal(ret.ModelContent(), &text) != nil {
		text = string(ret.ModelContent())
	}
	return nil, &FeedbackError{Message: escape(fmt.Sprintf("Tool %q returned %s: %s", a.Name, ret.Kind, text)), Metadata: map[string]any{"proxied_kind": ret.Kind.String()}}
}

// markup escapes the characters that start markup (&, <, >), so error
// text is shown, never rendered, wherever the model's input is.
var markup = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;")

// escape makes text safe to show where markup is rendered.
func escape(s string) string { return markup.Replace(s) }
