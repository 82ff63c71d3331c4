package openai

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/packages/param"
	"github.com/openai/openai-go/v3/shared"

	"github.com/weft-run/weft/llm"
)

// chatReserved are body fields of Chat Completions the adapter builds
// from the Request; Settings.Provider cannot replace them.
var chatReserved = []string{"model", "messages", "tools", "stream", "stream_options"}

// chatParams maps req onto a Chat Completions request body, and returns
// the null strippers of its strict tools by name.
func (m *Model) chatParams(req *llm.Request, stream bool) (openai.ChatCompletionNewParams, map[string]*nulls, error) {
	p := openai.ChatCompletionNewParams{Model: shared.ChatModel(m.id)}
	p.Messages = chatMessages(req)
	tools, strip, err := m.toolDefinitions(req.Tools)
	if err != nil {
		return p, nil, err
	}
	for _, t := range tools {
		fn := shared.FunctionDefinitionParam{Name: t.name, Parameters: t.params}
		if t.description != "" {
			fn.Description = param.NewOpt(t.description)
		}
		if t.strict {
			fn.Strict = param.NewOpt(true)
		}
		p.Tools = append(p.Tools, openai.ChatCompletionFunctionTool(fn))
	}
	s := req.Settings
	if s.Temperature != nil {
		p.Temperature = param.NewOpt(*s.Temperature)
	}
	if s.TopP != nil {
		p.TopP = param.NewOpt(*s.TopP)
	}
	if s.MaxTokens > 0 {
		if m.maxTokens == "max_completion_tokens" {
			p.MaxCompletionTokens = param.NewOpt(int64(s.MaxTokens))
		} else {
			p.MaxTokens = param.NewOpt(int64(s.MaxTokens))
		}
	}
	if len(s.StopSequences) > 0 {
		p.Stop = openai.ChatCompletionNewParamsStopUnion{OfStringArray: s.StopSequences}
	}
	if s.Seed != nil {
		p.Seed = param.NewOpt(*s.Seed)
	}
	if stream {
		p.StreamOptions = openai.ChatCompletionStreamOptionsParam{IncludeUsage: param.NewOpt(true)}
	}
	extras, err := providerExtras(s.Provider, chatReserved)
	if err != nil {
		return p, nil, err
	}
	if len(extras) > 0 {
		p.SetExtraFields(extras)
	}
	return p, strip, nil
}

// chatMessages maps the conversation: the instructions as the first system
// message, then every message in order. The parts of a user message that
// answer tool calls (tool returns, and retry prompts about a call) become
// tool messages ahead of its other parts, since the API wants a call's
// answer right after the assistant message that made it.
func chatMessages(req *llm.Request) []openai.ChatCompletionMessageParamUnion {
	out := make([]openai.ChatCompletionMessageParamUnion, 0, len(req.Messages)+1)
	if req.Instructions != "" {
		out = append(out, openai.SystemMessage(req.Instructions))
	}
	for _, msg := range req.Messages {
		switch msg.Role {
		case llm.RoleSystem:
			var texts []string
			for _, p := range msg.Parts {
				if in, ok := p.(llm.Instructions); ok {
					texts = append(texts, in.Text)
				}
			}
			out = append(out, openai.SystemMessage(strings.Join(texts, "\n\n")))
		case llm.RoleAssistant:
			out = append(out, chatAssistant(msg))
		case llm.RoleUser:
			var rest []openai.ChatCompletionMessageParamUnion
			for _, p := range msg.Parts {
				switch p := p.(type) {
				case llm.ToolReturn:
					out = append(out, openai.ToolMessage(p.ContentText(), p.CallID))
				case llm.RetryPrompt:
					if p.CallID != "" {
						out = append(out, openai.ToolMessage(p.Message, p.CallID))
					} else {
						rest = append(rest, openai.UserMessage(p.Message))
					}
				case llm.UserPrompt:
					rest = append(rest, openai.UserMessage(p.Text))
				}
			}
			out = append(out, rest...)
		}
	}
	return out
}

func chatAssistant(msg llm.Message) openai.ChatCompletionMessageParamUnion {
	var a openai.ChatCompletionAssistantMessageParam
	var text strings.Builder
	for _, p := range msg.Parts {
		switch p := p.(type) {
		case llm.Text:
			text.WriteString(p.Text)
		case llm.ToolCall:
			a.ToolCalls = append(a.ToolCalls, openai.ChatCompletionMessageToolCallUnionParam{
				OfFunction: &openai.ChatCompletionMessageFunctionToolCallParam{
					ID: p.ID,
					Function: openai.ChatCompletionMessageFunctionToolCallFunctionParam{
						Name: p.Name, Arguments: argumentsText(p.Arguments),
					},
				},
			})
		}
	}
	if text.Len() > 0 {
		a.Content.OfString = param.NewOpt(text.String())
	}
	return openai.ChatCompletionMessageParamUnion{OfAssistant: &a}
}

// argumentsText is a call's arguments as the API carries them: a string,
// "{}" when there are none.
func argumentsText(args json.RawMessage) string {
	if len(bytes.TrimSpace(args)) == 0 {
		return "{}"
	}
	return string(args)
}

// toolDef is a tool as both APIs send it.
type toolDef struct {
	name, description string
	params            map[string]any
	strict            bool
}

// toolDefinitions converts the request's tools; a strict tool's schema goes
// through StrictSchema, and a schema that cannot be converted fails the
// request before it is sent.
func (m *Model) toolDefinitions(defs []llm.ToolDefinition) ([]toolDef, map[string]*nulls, error) {
	if len(defs) == 0 {
		return nil, nil, nil
	}
	out := make([]toolDef, len(defs))
	var strip map[string]*nulls
	for i, d := range defs {
		t := toolDef{name: d.Name, description: d.Description, strict: d.Strict}
		s, n, err := m.schemaCached(d.Name, d.Strict, d.Parameters)
		if err != nil {
			return nil, nil, err
		}
		t.params = s
		if !n.empty() {
			if strip == nil {
				strip = map[string]*nulls{}
			}
			strip[d.Name] = n
		}
		out[i] = t
	}
	return out, strip, nil
}

// providerExtras decodes Settings.Provider into extra body fields; a key
// the adapter builds itself is ErrUnsupported.
func providerExtras(p map[string]json.RawMessage, reserved []string) (map[string]any, error) {
	if len(p) == 0 {
		return nil, nil
	}
	out := make(map[string]any, len(p))
	for k, raw := range p {
		for _, r := range reserved {
			if k == r {
				return nil, fmt.Errorf("%w: Settings.Provider[%q] would replace a field the adapter builds", ErrUnsupported, k)
			}
		}
		var v any
		d := json.NewDecoder(bytes.NewReader(raw))
		d.UseNumber()
		if err := d.Decode(&v); err != nil {
			return nil, fmt.Errorf("%w: Settings.Provider[%q] is not JSON", ErrUnsupported, k)
		}
		out[k] = v
	}
	return out, nil
}
