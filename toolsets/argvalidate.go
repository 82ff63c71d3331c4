package toolsets

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
)

// ArgumentValidator checks, and may normalise, a call's arguments after
// they passed the tool's schema. It returns the arguments to go on with
// (nil: unchanged) or an error that refuses the call as
// [KindInvalidArguments]: an [*InvalidArgumentsError] as it is, any other
// error with its message for the model. A normalised argument object must
// still fit the schema.
type ArgumentValidator func(args json.RawMessage) (json.RawMessage, error)

// ValidateArguments returns t with validators that run in order after the
// schema, on every call (a model's, an application's, a resumed one, and
// after a Before hook's rewrite). Each sees the arguments the previous one
// left; the first refusal ends the call before the tool runs.
func ValidateArguments(t Tool, validators ...ArgumentValidator) (Tool, error) {
	def := t.Definition()
	for _, v := range validators {
		if v == nil {
			return nil, &DefinitionError{Tool: def.Name, Err: fmt.Errorf("%w: nil argument validator", ErrInvalidDefinition)}
		}
	}
	x := def.extras()
	x.validators = append(x.validators, validators...)
	def.Extras = x
	return &overlay{inner: t, def: def}, nil
}

// check decodes args and validates them against the schema, then runs the
// argument validators: the arguments to run with, or why they are refused.
func (e *entry) check(args json.RawMessage) (json.RawMessage, *InvalidArgumentsError) {
	decoded, ia := decodeArguments(args)
	if ia != nil {
		return args, ia
	}
	return e.checkDecoded(args, decoded)
}

// checkDecoded is check for arguments decoded already.
func (e *entry) checkDecoded(args json.RawMessage, decoded any) (json.RawMessage, *InvalidArgumentsError) {
	ia := e.validator.validate(decoded)
	if ia != nil || e.def.Extras == nil || len(e.def.Extras.validators) == 0 {
		return args, ia
	}
	for i, v := range e.def.Extras.validators {
		out, err := runValidator(v, args)
		if err != nil {
			var typed *InvalidArgumentsError
			if errors.As(err, &typed) {
				return args, typed
			}
			return args, &InvalidArgumentsError{Message: err.Error(), HowToFix: "Correct the arguments and call the tool again."}
		}
		if out == nil {
			continue
		}
		decoded, ia := decodeArguments(out)
		if ia == nil {
			ia = e.validator.validate(decoded)
		}
		if ia != nil {
			return args, &InvalidArgumentsError{Message: fmt.Sprintf("argument validator %d normalised the arguments into ones that do not fit the schema: %s", i+1, ia.Message), Field: ia.Field}
		}
		args = out
	}
	return args, nil
}

// runValidator runs v, turning a panic into an error.
func runValidator(v ArgumentValidator, args json.RawMessage) (out json.RawMessage, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("argument validator panicked: %v", p)
		}
	}()
	return v(slices.Clone(args))
}
