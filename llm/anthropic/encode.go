package anthropic

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/packages/param"

	"github.com/weft-run/weft/llm"
)

// encode maps req onto the parameters of a Messages API request. It fails
// (a *llm.ModelError, nothing sent) on a nil request, an invalid message,
// an unsupported setting or a strict tool whose schema cannot be made
// strict.
func (m *Model) encode(req *llm.Request) (sdk.MessageNewParams, error) {
	var p sdk.MessageNewParams
	if req == nil {
		return p, m.modelError(llm.ErrNilRequest)
	}
	s := req.Settings
	if err := m.checkSettings(s); err != nil {
		return p, m.modelError(err)
	}
	system, msgs, err := encodeMessages(req)
	if err != nil {
		return p, m.modelError(err)
	}
	tools, err := encodeTools(req.Tools)
	if err != nil {
		return p, m.modelError(err)
	}
	p.Model = sdk.Model(m.id)
	p.MaxTokens = int64(m.maxTokens)
	if s.MaxTokens > 0 {
		p.MaxTokens = int64(s.MaxTokens)
	}
	p.System, p.Messages, p.Tools = system, msgs, tools
	p.StopSequences = slices.Clone(s.StopSequences)
	if len(s.Provider) > 0 {
		extras := make(map[string]any, len(s.Provider))
		for k, v := range s.Provider {
			if !json.Valid(v) {
				return p, m.modelError(fmt.Errorf("%w: provider setting %q is not valid JSON", ErrInvalidSetting, k))
			}
			extras[k] = json.RawMessage(v)
		}
		p.SetExtraFields(extras)
	}
	return p, nil
}

// unsupported lists the settings of llm.Settings the Messages API cannot
// take, with why. The API version the SDK speaks (2026-10-21) answers 400
// to temperature and top_p even at their defaults, and the API has never
// had a seed.
var unsupported = []struct {
	name, why string
	set       func(llm.Settings) bool
}{
	{"temperature", "the Messages API version the SDK speaks rejects it", func(s llm.Settings) bool { return s.Temperature != nil }},
	{"top_p", "the Messages API version the SDK speaks rejects it", func(s llm.Settings) bool { return s.TopP != nil }},
	{"seed", "the Messages API has no seed", func(s llm.Settings) bool { return s.Seed != nil }},
}

func (m *Model) checkSettings(s llm.Settings) error {
	if m.ignoreUnsupported {
		return nil
	}
	for _, u := range unsupported {
		if u.set(s) {
			return fmt.Errorf("%w: %s (%s)", ErrUnsupportedSetting, u.name, u.why)
		}
	}
	if s.MaxTokens < 0 {
		return fmt.Errorf("%w: max_tokens %d", ErrInvalidSetting, s.MaxTokens)
	}
	return nil
}

// turn is one message of the API's conversation being built: the tool
// results go first in a user turn, as the API requires, then the rest.
type turn struct {
	role            llm.Role
	results, blocks []sdk.ContentBlockParamUnion
}

// encodeMessages maps the conversation. Request.Instructions and the
// Instructions parts of system messages, in order, become the system
// prompt. User and assistant messages keep their order; consecutive
// messages of one role are merged into one turn (so the tool returns of
// one step, however many messages hold them, answer the assistant's
// tool_use blocks in the next user turn). Empty texts are left out, since
// the API rejects empty text blocks.
func encodeMessages(req *llm.Request) ([]sdk.TextBlockParam, []sdk.MessageParam, error) {
	var system []sdk.TextBlockParam
	if req.Instructions != "" {
		system = append(system, sdk.TextBlockParam{Text: req.Instructions})
	}
	var turns []*turn
	for i, msg := range req.Messages {
		if err := msg.Validate(); err != nil {
			return nil, nil, fmt.Errorf("message %d: %w", i, err)
		}
		if msg.Role == llm.RoleSystem {
			for _, p := range msg.Parts {
				if in := p.(llm.Instructions); in.Text != "" {
					system = append(system, sdk.TextBlockParam{Text: in.Text})
				}
			}
			continue
		}
		if len(turns) == 0 || turns[len(turns)-1].role != msg.Role {
			turns = append(turns, &turn{role: msg.Role})
		}
		t := turns[len(turns)-1]
		for _, p := range msg.Parts {
			switch p := p.(type) {
			case llm.UserPrompt:
				t.addText(p.Text)
			case llm.Text:
				t.addText(p.Text)
			case llm.ToolCall:
				t.blocks = append(t.blocks, sdk.NewToolUseBlock(p.ID, toolInput(p.Arguments), p.Name))
			case llm.ToolReturn:
				t.results = append(t.results, toolResult(p.CallID, p.ContentText(), p.IsError))
			case llm.RetryPrompt:
				if p.CallID == "" {
					t.addText(p.Message)
					continue
				}
				t.results = append(t.results, toolResult(p.CallID, p.Message, true))
			}
		}
	}
	msgs := make([]sdk.MessageParam, 0, len(turns))
	for _, t := range turns {
		content := append(t.results, t.blocks...)
		if len(content) == 0 {
			continue
		}
		if t.role == llm.RoleUser {
			msgs = append(msgs, sdk.NewUserMessage(content...))
		} else {
			msgs = append(msgs, sdk.NewAssistantMessage(content...))
		}
	}
	return system, msgs, nil
}

func (t *turn) addText(s string) {
	if s != "" {
		t.blocks = append(t.blocks, sdk.NewTextBlock(s))
	}
}

// toolResult is a tool_result block answering call id with text (none
// when text is empty).
func toolResult(id, text string, isError bool) sdk.ContentBlockParamUnion {
	b := sdk.ToolResultBlockParam{ToolUseID: id}
	if text != "" {
		b.Content = []sdk.ToolResultBlockParamContentUnion{{OfText: &sdk.TextBlockParam{Text: text}}}
	}
	if isError {
		b.IsError = sdk.Bool(true)
	}
	return sdk.ContentBlockParamUnion{OfToolResult: &b}
}

// toolInput is the input of a tool_use block replayed from the history:
// the call's arguments when they are a JSON object, and {} otherwise (the
// API takes only objects; arguments that were not are what the runtime's
// retry prompt answering the call explains to the model).
func toolInput(args json.RawMessage) json.RawMessage {
	trimmed := bytes.TrimSpace(args)
	if len(trimmed) > 0 && trimmed[0] == '{' && json.Valid(trimmed) {
		return trimmed
	}
	return json.RawMessage(`{}`)
}

// emptySchema is the input_schema of a tool without parameters.
var emptySchema = json.RawMessage(`{"type":"object","properties":{}}`)

// encodeTools maps tool definitions: name, description, the parameters
// schema as input_schema (verbatim, or converted by strictSchema for a
// strict tool, which is sent with strict: true). Metadata is not sent: the
// API has no place for it.
func encodeTools(defs []llm.ToolDefinition) ([]sdk.ToolUnionParam, error) {
	if len(defs) == 0 {
		return nil, nil
	}
	out := make([]sdk.ToolUnionParam, 0, len(defs))
	for _, d := range defs {
		schema := json.RawMessage(d.Parameters)
		if len(bytes.TrimSpace(schema)) == 0 {
			schema = emptySchema
		}
		if !json.Valid(schema) {
			return nil, fmt.Errorf("%w: tool %q: parameters schema is not valid JSON", ErrInvalidTool, d.Name)
		}
		if d.Strict {
			s, err := strictSchema(schema)
			if err != nil {
				return nil, fmt.Errorf("tool %q: %w", d.Name, err)
			}
			schema = s
		}
		tp := sdk.ToolParam{Name: d.Name, InputSchema: param.Override[sdk.ToolInputSchemaParam](schema)}
		if d.Description != "" {
			tp.Description = sdk.String(d.Description)
		}
		if d.Strict {
			tp.Strict = sdk.Bool(true)
		}
		out = append(out, sdk.ToolUnionParam{OfTool: &tp})
	}
	return out, nil
}
