package weft

import (
	"encoding/json"
	"fmt"
	"maps"

	"github.com/weft-run/weft/actors"
	"github.com/weft-run/weft/llm"
	"github.com/weft-run/weft/toolsets"
)

// CapabilityBundle packages composition broader than tools as one unit
// (the seed's CapabilityBundle): instructions, tools, model settings,
// request parameters, output validators and run-start hooks. Add bundles to
// AgentConfig.Capabilities; they apply in order after the agent's own
// fields.
type CapabilityBundle struct {
	// Name names the bundle; its tools form a toolset of that name (and
	// id), so it must be a valid toolset name when Tools is not empty.
	Name string
	// Instructions are appended to the agent's instructions.
	Instructions []string
	// Tools are exposed as the toolset Name.
	Tools []toolsets.Tool
	// ModelSettings override the agent's settings field by field (the
	// non-zero fields win).
	ModelSettings llm.Settings
	// RequestParams are provider request parameters, encoded as JSON into
	// llm.Settings.Provider by key.
	RequestParams map[string]any
	// OutputValidators are appended to the agent's.
	OutputValidators []OutputValidator
	// OnRunStart hooks run after the agent's own.
	OnRunStart []RunStartHook
	// ToolHooks are agent-level tool-execution hooks, after the agent's
	// own (so inside them); see AgentConfig.ToolHooks.
	ToolHooks []toolsets.Hook
	// ModelRequestHooks see and may amend every model request (its
	// instructions, messages, tools and settings) before it is sent, in
	// bundle order. An error fails the run with kind capability_error
	// and the model is not called. When they change the request,
	// model.response records its digests before and after them.
	ModelRequestHooks []ModelRequestHook
	// RunCompleteHooks see each final output the output validators
	// accepted, before the run completes; an error fails the run with
	// kind capability_error in the same append as the model's response.
	// The run's toolsets are exited either way.
	RunCompleteHooks []RunCompleteHook
}

// ModelRequestHook sees and may amend a model request before it is sent;
// it runs on the goroutine that calls the model.
type ModelRequestHook = actors.RequestHook

// RunCompleteHook sees a run's final output before it completes.
type RunCompleteHook = actors.RunCompleteHook

// RunCompletion is what a RunCompleteHook sees.
type RunCompletion = actors.RunCompletion

// apply merges the bundle into spec and returns its hooks.
func (b CapabilityBundle) apply(spec *actors.AgentSpec) ([]RunStartHook, error) {
	if b.Name == "" {
		return nil, fmt.Errorf("capability bundle: %w: no name", toolsets.ErrInvalidName)
	}
	spec.Instructions = append(spec.Instructions, b.Instructions...)
	if len(b.Tools) > 0 {
		ts, err := toolsets.New(b.Name, b.Tools, toolsets.WithID(b.Name))
		if err != nil {
			return nil, fmt.Errorf("capability bundle %q: %w", b.Name, err)
		}
		spec.Toolsets = append(spec.Toolsets, ts)
	}
	mergeSettings(&spec.Settings, b.ModelSettings)
	for k, v := range b.RequestParams {
		raw, err := json.Marshal(v)
		if err != nil {
			return nil, fmt.Errorf("capability bundle %q: request param %q: %w", b.Name, k, err)
		}
		if spec.Settings.Provider == nil {
			spec.Settings.Provider = map[string]json.RawMessage{}
		}
		spec.Settings.Provider[k] = raw
	}
	spec.OutputValidators = append(spec.OutputValidators, validators(b.OutputValidators)...)
	if err := toolsets.CheckHooks(b.ToolHooks); err != nil {
		return nil, fmt.Errorf("capability bundle %q: %w", b.Name, err)
	}
	spec.ToolHooks = append(spec.ToolHooks, b.ToolHooks...)
	spec.RequestHooks = append(spec.RequestHooks, b.ModelRequestHooks...)
	spec.RunCompleteHooks = append(spec.RunCompleteHooks, b.RunCompleteHooks...)
	return b.OnRunStart, nil
}

// cloneSettings returns s with its own Provider map.
func cloneSettings(s llm.Settings) llm.Settings {
	s.Provider = maps.Clone(s.Provider)
	return s
}

// mergeSettings sets the non-zero fields of over on dst.
func mergeSettings(dst *llm.Settings, over llm.Settings) {
	if over.Temperature != nil {
		dst.Temperature = over.Temperature
	}
	if over.TopP != nil {
		dst.TopP = over.TopP
	}
	if over.MaxTokens != 0 {
		dst.MaxTokens = over.MaxTokens
	}
	if len(over.StopSequences) > 0 {
		dst.StopSequences = over.StopSequences
	}
	if over.Seed != nil {
		dst.Seed = over.Seed
	}
	for k, v := range over.Provider {
		if dst.Provider == nil {
			dst.Provider = map[string]json.RawMessage{}
		}
		dst.Provider[k] = v
	}
}

// validators returns vs as the runtime takes them.
func validators(vs []OutputValidator) []actors.OutputValidator {
	out := make([]actors.OutputValidator, len(vs))
	for i, v := range vs {
		out[i] = actors.OutputValidator(v)
	}
	return out
}
