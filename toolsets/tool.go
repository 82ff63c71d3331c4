package toolsets

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
)

// Tool is anything the registry can call. Any Go type implementing it is a
// "class tool"; [NewFunc] and [NewContextFunc] build tools from functions.
type Tool interface {
	// Definition describes the tool. The registry reads it once, at
	// registration, and checks it (name, schema, strict description).
	Definition() Definition
	// Call runs one attempt. args are the call's arguments, already
	// validated against Definition().Parameters. ctx ends when the call is
	// cancelled or the attempt times out; tc carries the call's runtime
	// state. The result is a [Result], a *Result, or any JSON-encodable
	// value (its content). Errors steer the runtime: see [KindOf].
	Call(ctx context.Context, tc *ToolContext, args json.RawMessage) (any, error)
}

// toolFields are the options a tool constructor accepts.
const toolFields = fDescription | fSchema | fStrict | fSequential | fConcurrentSafe | fMetadata | fTimeout | fMaxRetries | fVisibility | fErrorHandler

// funcTool is a tool built from a typed Go function.
type funcTool[A, R any] struct {
	def      Definition
	explicit field // options the caller set, so toolset defaults do not override them
	fn       func(context.Context, *ToolContext, A) (R, error)
	isMap    bool // A is a map: a nil map after decoding becomes an empty one
	handlers []ErrorHandler
}

// NewFunc builds a tool from fn, which takes its arguments as A.
//
// A is a struct (or pointer to one) whose parameters schema is inferred:
// property names from json tags, descriptions from `jsonschema:"..."`
// tags, required = fields without omitempty/omitzero, no other properties
// allowed. A map type such as map[string]any needs [WithSchema]. R is any
// JSON-encodable value, or a [Result]. The tool does not see a
// [ToolContext]; use [NewContextFunc] for that.
func NewFunc[A, R any](name string, fn func(context.Context, A) (R, error), opts ...Option) (Tool, error) {
	if fn == nil {
		return nil, &DefinitionError{Tool: name, Err: fmt.Errorf("%w: nil function", ErrInvalidDefinition)}
	}
	return newFuncTool(name, func(ctx context.Context, _ *ToolContext, a A) (R, error) { return fn(ctx, a) }, opts)
}

// NewContextFunc is [NewFunc] for a function that also takes the call's
// [*ToolContext] (run ids, approval, cancellation, progress events).
func NewContextFunc[A, R any](name string, fn func(context.Context, *ToolContext, A) (R, error), opts ...Option) (Tool, error) {
	if fn == nil {
		return nil, &DefinitionError{Tool: name, Err: fmt.Errorf("%w: nil function", ErrInvalidDefinition)}
	}
	return newFuncTool(name, fn, opts)
}

func newFuncTool[A, R any](name string, fn func(context.Context, *ToolContext, A) (R, error), opts []Option) (*funcTool[A, R], error) {
	fail := func(err error) (*funcTool[A, R], error) { return nil, &DefinitionError{Tool: name, Err: err} }
	var s settings
	if err := s.apply(opts, toolFields, "a tool"); err != nil {
		return fail(err)
	}
	at := reflect.TypeFor[A]()
	if at == reflect.TypeFor[ToolContext]() || at == reflect.TypeFor[*ToolContext]() {
		return fail(fmt.Errorf("%w: the ToolContext is not an argument; take it as the parameter before the arguments (NewContextFunc, Add)", ErrInvalidDefinition))
	}
	def := Definition{
		Name:           name,
		Description:    s.description,
		Strict:         s.strict,
		Sequential:     s.sequential,
		ConcurrentSafe: s.concurrent,
		Metadata:       s.metadata,
		Timeout:        s.timeout,
		Visibility:     s.visibility,
	}
	if s.has(fMaxRetries) {
		n := s.maxRetries
		def.MaxRetries = &n
	}
	var err error
	if s.has(fSchema) {
		def.Parameters, err = schemaJSON(s.schema)
	} else {
		def.Parameters, err = inferAnnotated(at)
	}
	if err != nil {
		return fail(err)
	}
	if err := def.check(); err != nil {
		return fail(err)
	}
	if _, err := newValidator(def.Parameters); err != nil {
		return fail(err)
	}
	return &funcTool[A, R]{def: def, explicit: s.set, fn: fn, isMap: at.Kind() == reflect.Map, handlers: s.handlers}, nil
}

// Definition returns a copy of the tool's definition.
func (t *funcTool[A, R]) Definition() Definition { return t.def.Clone() }

// Call decodes args into A and calls the function.
func (t *funcTool[A, R]) Call(ctx context.Context, tc *ToolContext, args json.RawMessage) (any, error) {
	var a A
	if len(args) > 0 {
		if err := decodeInto(args, &a); err != nil {
			return nil, decodeProblem(err)
		}
	}
	if tc != nil && tc.bound != nil {
		if err := setFields(&a, tc.bound); err != nil {
			return nil, InvalidArguments("", err.Error(), "Pass a variable of the type the parameter wants.")
		}
	}
	if t.isMap {
		if v := reflect.ValueOf(&a).Elem(); v.IsNil() {
			v.Set(reflect.MakeMap(v.Type()))
		}
	}
	r, err := t.fn(ctx, tc, a)
	if err != nil {
		return nil, err
	}
	return r, nil
}

// decodeInto decodes validated arguments into dst. JSON Schema counts 2.0
// as an integer but encoding/json will not put it in an int, so on a type
// error the arguments are put in canonical form ([CanonicalArguments],
// which writes 2.0 as 2 and keeps every other number's text, so no integer
// loses precision) and decoded once more. A number that still does not fit
// its field is the second decode's error (see decodeProblem).
func decodeInto(args json.RawMessage, dst any) error {
	err := json.Unmarshal(args, dst)
	var te *json.UnmarshalTypeError
	if err == nil || !errors.As(err, &te) {
		return err
	}
	norm, cerr := CanonicalArguments(args)
	if cerr != nil {
		return err
	}
	reflect.ValueOf(dst).Elem().SetZero()
	err2 := json.Unmarshal(norm, dst)
	var te2 *json.UnmarshalTypeError
	if errors.As(err2, &te2) && te2.Field == te.Field {
		return err // the same field: report the number as it was sent
	}
	return err2
}
