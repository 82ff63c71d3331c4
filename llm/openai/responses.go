package openai

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/openai/openai-go/v3/packages/param"
	"github.com/openai/openai-go/v3/responses"
	"github.com/openai/openai-go/v3/shared"

	"github.com/openai/openai-go/v3/option"

	"github.com/weft-run/weft/llm"
)

// responsesReserved are body fields of the Responses API the adapter
// builds from the Request; Settings.Provider cannot replace them.
var responsesReserved = []string{"model", "input", "instructions", "tools", "stream", "store"}

// responsesParams maps req onto a Responses request body. The request is
// stateless (store: false): weft sends the whole conversation every time.
// Stop sequences and a seed, which the API lacks, are ErrUnsupported.
func (m *Model) responsesParams(req *llm.Request) (responses.ResponseNewParams, map[string]*nulls, error) {
	p := responses.ResponseNewParams{Model: shared.ResponsesModel(m.id), Store: param.NewOpt(false)}
	s := req.Settings
	if len(s.StopSequences) > 0 {
		return p, nil, fmt.Errorf("%w: the Responses API has no stop sequences (use ChatCompletions)", ErrUnsupported)
	}
	if s.Seed != nil {
		return p, nil, fmt.Errorf("%w: the Responses API has no seed (use ChatCompletions)", ErrUnsupported)
	}
	if req.Instructions != "" {
		p.Instructions = param.NewOpt(req.Instructions)
	}
	p.Input = responses.ResponseNewParamsInputUnion{OfInputItemList: responsesInput(req)}
	tools, strip, err := m.toolDefinitions(req.Tools)
	if err != nil {
		return p, nil, err
	}
	for _, t := range tools {
		// Strict is sent either way: the API's default is true.
		ft := &responses.FunctionToolParam{Name: t.name, Parameters: t.params, Strict: param.NewOpt(t.strict)}
		if t.description != "" {
			ft.Description = param.NewOpt(t.description)
		}
		p.Tools = append(p.Tools, responses.ToolUnionParam{OfFunction: ft})
	}
	if s.Temperature != nil {
		p.Temperature = param.NewOpt(*s.Temperature)
	}
	if s.TopP != nil {
		p.TopP = param.NewOpt(*s.TopP)
	}
	if s.MaxTokens > 0 {
		p.MaxOutputTokens = param.NewOpt(int64(s.MaxTokens))
	}
	extras, err := providerExtras(s.Provider, responsesReserved)
	if err != nil {
		return p, nil, err
	}
	if len(extras) > 0 {
		p.SetExtraFields(extras)
	}
	return p, strip, nil
}

// responsesInput maps the conversation onto input items, in order: system
// and user messages, the assistant's text as an assistant message and its
// calls as function_call items, tool returns (and retry prompts about a
// call) as function_call_output items.
func responsesInput(req *llm.Request) responses.ResponseInputParam {
	out := make(responses.ResponseInputParam, 0, len(req.Messages)+1)
	msg := func(text string, role responses.EasyInputMessageRole) {
		out = append(out, responses.ResponseInputItemParamOfMessage(text, role))
	}
	output := func(callID, text string) {
		item := responses.ResponseInputItemParamOfFunctionCallOutput(text)
		item.OfFunctionCallOutput.CallID = param.NewOpt(callID)
		out = append(out, item)
	}
	for _, m := range req.Messages {
		switch m.Role {
		case llm.RoleSystem:
			var texts []string
			for _, p := range m.Parts {
				if in, ok := p.(llm.Instructions); ok {
					texts = append(texts, in.Text)
				}
			}
			msg(strings.Join(texts, "\n\n"), responses.EasyInputMessageRoleSystem)
		case llm.RoleAssistant:
			var text strings.Builder
			for _, p := range m.Parts {
				if t, ok := p.(llm.Text); ok {
					text.WriteString(t.Text)
				}
			}
			if text.Len() > 0 {
				msg(text.String(), responses.EasyInputMessageRoleAssistant)
			}
			for _, c := range m.ToolCalls() {
				out = append(out, responses.ResponseInputItemParamOfFunctionCall(argumentsText(c.Arguments), c.ID, c.Name))
			}
		case llm.RoleUser:
			var rest []string
			for _, p := range m.Parts {
				switch p := p.(type) {
				case llm.ToolReturn:
					output(p.CallID, p.ContentText())
				case llm.RetryPrompt:
					if p.CallID != "" {
						output(p.CallID, p.Message)
					} else {
						rest = append(rest, p.Message)
					}
				case llm.UserPrompt:
					rest = append(rest, p.Text)
				}
			}
			for _, t := range rest {
				msg(t, responses.EasyInputMessageRoleUser)
			}
		}
	}
	return out
}

// responsesRequest sends req to the Responses API, not streamed.
func (m *Model) responsesRequest(ctx context.Context, req *llm.Request) (*llm.Response, error) {
	p, strip, err := m.responsesParams(req)
	if err != nil {
		return nil, m.fail(err)
	}
	var raw *http.Response
	r, err := m.responses.New(ctx, p, option.WithResponseInto(&raw))
	if err != nil {
		return nil, m.failRequest(ctx, req, raw, err)
	}
	resp, err := m.responsesResponse(r, strip)
	if err != nil {
		return nil, m.failRequest(ctx, req, raw, err)
	}
	return resp, nil
}

// responsesResponse maps a Responses answer: the text of its output
// messages (refusals included), its function calls, a finish reason from
// its status, and the usage. A failed response is an error.
func (m *Model) responsesResponse(r *responses.Response, strip map[string]*nulls) (*llm.Response, error) {
	if r.Status == "failed" {
		return nil, &streamFailure{typ: "response_failed", code: string(r.Error.Code), msg: r.Error.Message}
	}
	resp := &llm.Response{Model: m.name, Usage: llm.Usage{
		InputTokens:     r.Usage.InputTokens,
		OutputTokens:    r.Usage.OutputTokens,
		CacheReadTokens: r.Usage.InputTokensDetails.CachedTokens,
		Requests:        1,
	}}
	var text strings.Builder
	refused := false
	for _, item := range r.Output {
		switch item.Type {
		case "message":
			for _, c := range item.Content {
				switch c.Type {
				case "output_text":
					text.WriteString(c.Text)
				case "refusal":
					text.WriteString(c.Refusal)
					refused = true
				}
			}
		case "function_call":
			resp.ToolCalls = append(resp.ToolCalls, llm.ToolCall{
				ID: item.CallID, Name: item.Name,
				Arguments: stripNulls(json.RawMessage(item.Arguments.OfString), strip[item.Name]),
			})
		}
	}
	resp.Text = text.String()
	resp.FinishReason = responsesFinish(string(r.Status), string(r.IncompleteDetails.Reason), len(resp.ToolCalls) > 0)
	if refused && resp.FinishReason == llm.FinishStop {
		resp.FinishReason = llm.FinishContentFilter
	}
	return resp, nil
}

// responsesFinish maps a response's status (and the reason it is
// incomplete) onto llm's finish reasons.
func responsesFinish(status, incomplete string, calls bool) llm.FinishReason {
	switch {
	case status == "incomplete" && incomplete == "max_output_tokens":
		return llm.FinishLength
	case status == "incomplete" && incomplete == "content_filter":
		return llm.FinishContentFilter
	case status == "incomplete":
		return llm.FinishReason("incomplete")
	case calls:
		return llm.FinishToolCalls
	}
	return llm.FinishStop
}

// streamFailure is a failure the provider reported inside a 200 answer: a
// failed response or an error event of a stream.
type streamFailure struct{ typ, code, msg string }

func (e *streamFailure) Error() string { return e.msg }
