package toolsets

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/big"
	"reflect"
	"strconv"
	"strings"
)

// CanonicalArguments returns the canonical encoding of call arguments: the
// same JSON value written one way only, so that what a person reviews is
// byte for byte what a tool receives. Objects have their members sorted
// by name, with no white space; strings are written with the fewest
// escapes (no HTML escaping, invalid UTF-8 as U+FFFD, as encoding/json
// decodes it); a number keeps its text, except that a number with a
// fraction or an exponent whose value is an integer is written as that
// integer (2.0 and 2e0 are 2, as JSON Schema counts them). Empty arguments
// are {}.
//
// It refuses, with an [*InvalidArgumentsError], what [Registry.Call]
// refuses before any schema check: text that is not JSON, a member named
// twice in one object at any depth, a number beyond the float64 range.
// The runtime records an approval request's arguments in this form and
// runs the approved call with them.
func CanonicalArguments(raw json.RawMessage) (json.RawMessage, error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return json.RawMessage(`{}`), nil
	}
	if _, ia := decodeArguments(raw); ia != nil {
		return nil, ia
	}
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, &InvalidArgumentsError{Message: fmt.Sprintf("the arguments are not valid JSON (%v).", err), HowToFix: "Send the arguments as a single JSON object."}
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(canonicalValue(v)); err != nil {
		return nil, fmt.Errorf("toolsets: encode canonical arguments: %w", err)
	}
	return json.RawMessage(bytes.TrimRight(b.Bytes(), "\n")), nil
}

// canonicalValue rewrites the numbers of a value decoded with UseNumber
// in place (see CanonicalArguments). encoding/json sorts map keys.
func canonicalValue(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = canonicalValue(e)
		}
	case []any:
		for i, e := range x {
			x[i] = canonicalValue(e)
		}
	case json.Number:
		return canonicalNumber(x)
	}
	return v
}

// maxExactExponent bounds the exponents canonicalNumber evaluates exactly:
// numbers that fit a float64 have exponents well inside it, and a huge
// negative one (1e-999999999, which decodes as 0) is left as written
// instead of being expanded.
const maxExactExponent = 400

// canonicalNumber writes an integral number with a fraction or an
// exponent as the integer; any other number keeps its text.
func canonicalNumber(n json.Number) json.Number {
	s := string(n)
	if !strings.ContainsAny(s, ".eE") {
		return n
	}
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		exp, err := strconv.Atoi(strings.TrimPrefix(s[i+1:], "+"))
		if err != nil || exp > maxExactExponent || exp < -maxExactExponent {
			return n
		}
	}
	r, ok := new(big.Rat).SetString(s)
	if !ok || !r.IsInt() {
		return n
	}
	return json.Number(r.Num().String())
}

// decodeProblem explains why arguments that passed the schema do not
// decode into the tool's Go type: a number outside the range of its field
// (a 30-digit integer for an int64, 300 for a uint8, 1.5 for an int) names
// the field and the range; another mismatch names the field and the type.
func decodeProblem(err error) *InvalidArgumentsError {
	var te *json.UnmarshalTypeError
	if !errors.As(err, &te) || te.Type == nil {
		return &InvalidArgumentsError{
			Message:  fmt.Sprintf("the arguments do not fit the tool's parameters (%v).", err),
			HowToFix: "Correct the argument named in the message and call the tool again.",
		}
	}
	name, fix := "the arguments", "the arguments"
	if te.Field != "" {
		name, fix = fmt.Sprintf("argument %q", te.Field), fmt.Sprintf("%q", te.Field)
	}
	if want := goRange(te.Type); want != "" && strings.HasPrefix(te.Value, "number") {
		got := strings.TrimPrefix(te.Value, "number ")
		return &InvalidArgumentsError{
			Field:    te.Field,
			Message:  fmt.Sprintf("%s must be %s, got %s.", name, want, got),
			HowToFix: fmt.Sprintf("Pass %s for %s.", want, fix),
		}
	}
	return &InvalidArgumentsError{
		Field:    te.Field,
		Message:  fmt.Sprintf("%s does not fit the tool's parameter type %s (got %s).", name, te.Type, te.Value),
		HowToFix: fmt.Sprintf("Pass a value of the type the parameters schema gives for %s.", fix),
	}
}

// goRange describes the numbers a Go numeric type holds ("an integer from
// 0 to 255"); "" for other types.
func goRange(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		bits := t.Bits()
		return fmt.Sprintf("an integer from %d to %d", int64(-1)<<(bits-1), int64(1)<<(bits-1)-1)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return fmt.Sprintf("an integer from 0 to %d", uint64(math.MaxUint64)>>(64-t.Bits()))
	case reflect.Float32:
		return fmt.Sprintf("a number from %g to %g", -math.MaxFloat32, math.MaxFloat32)
	case reflect.Float64:
		return fmt.Sprintf("a number from %g to %g", -math.MaxFloat64, math.MaxFloat64)
	}
	return ""
}
