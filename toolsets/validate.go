package toolsets

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"
)

// validator checks call arguments against a tool's parameters schema. It is
// built once, at registration, and is safe for concurrent use.
//
// Schemas that use only the common keywords (type, properties, required,
// additionalProperties, items, enum, minimum/maximum, minLength/maxLength,
// minItems/maxItems and annotations) are compiled into a tree that
// validates without allocating and names the failing field in its message.
// Any other schema is validated by jsonschema-go's resolved form. The fuzz
// test FuzzValidateArguments checks that both agree.
type validator struct {
	resolved *jsonschema.Resolved
	fast     *node // nil when the schema needs the general validator
}

// typeSet is a bit set of JSON Schema types; 0 means any type.
type typeSet uint8

const (
	tNull typeSet = 1 << iota
	tBoolean
	tInteger
	tNumber
	tString
	tArray
	tObject
)

var typeNames = []struct {
	t    typeSet
	name string
	a    string
}{
	{tNull, "null", "null"},
	{tBoolean, "boolean", "a boolean"},
	{tInteger, "integer", "an integer"},
	{tNumber, "number", "a number"},
	{tString, "string", "a string"},
	{tArray, "array", "an array"},
	{tObject, "object", "an object"},
}

func (s typeSet) describe() string {
	var parts []string
	for _, tn := range typeNames {
		if s&tn.t != 0 {
			parts = append(parts, tn.a)
		}
	}
	return strings.Join(parts, " or ")
}

// node is one compiled schema.
type node struct {
	never        bool // the false schema
	types        typeSet
	props        map[string]*node
	propNames    []string // sorted, for messages
	required     []string
	noAdditional bool  // additionalProperties: false
	additional   *node // additionalProperties schema; nil allows anything
	items        *node
	enum         []any
	minimum      *float64
	maximum      *float64
	minLength    *int
	maxLength    *int
	minItems     *int
	maxItems     *int
	description  string
}

// fastKeys are the keywords the compiled validator understands. The
// annotations among them do not affect validation.
var fastKeys = map[string]bool{
	"type": true, "properties": true, "required": true, "additionalProperties": true,
	"items": true, "enum": true, "minimum": true, "maximum": true, "minLength": true,
	"maxLength": true, "minItems": true, "maxItems": true,
	"description": true, "title": true, "default": true, "examples": true,
	"deprecated": true, "readOnly": true, "writeOnly": true,
}

// newValidator resolves a schema (already checked by the registration
// rules) and compiles its fast form when possible.
func newValidator(raw json.RawMessage) (*validator, error) {
	var s jsonschema.Schema
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, &SchemaError{Rule: RuleInvalid, Detail: "cannot decode the schema", Err: err}
	}
	resolved, err := s.Resolve(nil)
	if err != nil {
		return nil, &SchemaError{Rule: RuleInvalid, Detail: "cannot resolve the schema", Err: err}
	}
	var generic any
	if err := json.Unmarshal(raw, &generic); err != nil {
		return nil, &SchemaError{Rule: RuleInvalid, Detail: "cannot decode the schema", Err: err}
	}
	if err := checkTypeNames(generic, "#"); err != nil {
		return nil, err
	}
	fast, _ := compile(generic)
	return &validator{resolved: resolved, fast: fast}, nil
}

// compile builds the fast form of a decoded schema, reporting false when it
// uses a keyword outside fastKeys or a form the fast path does not handle.
func compile(v any) (*node, bool) {
	switch s := v.(type) {
	case bool:
		if s {
			return &node{}, true
		}
		return &node{never: true}, true
	case map[string]any:
		n := &node{}
		for k, val := range s {
			if !fastKeys[k] {
				return nil, false
			}
			var ok bool
			switch k {
			case "type":
				n.types, ok = compileTypes(val)
			case "properties":
				ok = n.compileProperties(val)
			case "required":
				ok = n.compileRequired(val)
			case "additionalProperties":
				if b, isBool := val.(bool); isBool && !b {
					n.noAdditional, ok = true, true
				} else {
					n.additional, ok = compile(val)
				}
			case "items":
				n.items, ok = compile(val)
			case "enum":
				n.enum, ok = val.([]any)
			case "minimum":
				n.minimum, ok = number(val)
			case "maximum":
				n.maximum, ok = number(val)
			case "minLength":
				n.minLength, ok = count(val)
			case "maxLength":
				n.maxLength, ok = count(val)
			case "minItems":
				n.minItems, ok = count(val)
			case "maxItems":
				n.maxItems, ok = count(val)
			case "description":
				n.description, ok = val.(string)
			default: // annotations
				ok = true
			}
			if !ok {
				return nil, false
			}
		}
		return n, true
	}
	return nil, false
}

func compileTypes(v any) (typeSet, bool) {
	one := func(name any) (typeSet, bool) {
		for _, tn := range typeNames {
			if tn.name == name {
				return tn.t, true
			}
		}
		return 0, false
	}
	if list, ok := v.([]any); ok {
		var set typeSet
		for _, item := range list {
			t, ok := one(item)
			if !ok {
				return 0, false
			}
			set |= t
		}
		return set, set != 0
	}
	return one(v)
}

func (n *node) compileProperties(v any) bool {
	props, ok := v.(map[string]any)
	if !ok {
		return false
	}
	n.props = make(map[string]*node, len(props))
	for name, sub := range props {
		c, ok := compile(sub)
		if !ok {
			return false
		}
		n.props[name] = c
	}
	n.propNames = sortedKeys(props)
	return true
}

func (n *node) compileRequired(v any) bool {
	list, ok := v.([]any)
	if !ok {
		return false
	}
	for _, item := range list {
		s, ok := item.(string)
		if !ok {
			return false
		}
		n.required = append(n.required, s)
	}
	return true
}

func number(v any) (*float64, bool) {
	f, ok := v.(float64)
	return &f, ok
}

func count(v any) (*int, bool) {
	f, ok := v.(float64)
	if !ok || f < 0 || f != math.Trunc(f) || f > math.MaxInt32 {
		return nil, false
	}
	n := int(f)
	return &n, true
}

// decodeArguments parses raw call arguments. Empty input is the empty
// object (some providers send nothing for a tool without parameters).
// Arguments that are not JSON, that name a member twice in one object (at
// any depth), or that hold a number beyond the float64 range are refused:
// see [checkArguments].
func decodeArguments(raw json.RawMessage) (any, *InvalidArgumentsError) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return map[string]any{}, nil
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, syntaxProblem(raw, err)
	}
	if ia := checkArguments(raw); ia != nil {
		return nil, ia
	}
	return v, nil
}

// checkArguments refuses arguments encoding/json accepted as JSON text
// that do not mean one thing: a member named twice in one object, at any
// depth (encoding/json would keep the last value, while a person reading
// them may read the first). It does not allocate when there is none.
func checkArguments(raw []byte) *InvalidArgumentsError {
	p := scanArguments(raw, false)
	if p == nil {
		return nil
	}
	f := p.field()
	return &InvalidArgumentsError{
		Field:    f,
		Message:  fmt.Sprintf("argument %q appears more than once in the same object; the arguments must name each argument once.", f),
		HowToFix: fmt.Sprintf("Send %q once, with the one value you mean.", f),
	}
}

// syntaxProblem explains why encoding/json refused raw: a number beyond
// the float64 range (valid JSON text, with its path), or text that is not
// JSON.
func syntaxProblem(raw []byte, err error) *InvalidArgumentsError {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) && json.Valid(raw) {
		if p := scanArguments(raw, true); p != nil && !p.duplicate {
			f := p.field()
			name, is := "the arguments", "are"
			if f != "" {
				name, is = fmt.Sprintf("argument %q", f), "is"
			}
			return &InvalidArgumentsError{
				Field:    f,
				Message:  fmt.Sprintf("%s %s the number %s, which is out of range: numbers must be between %g and %g.", name, is, p.number, -math.MaxFloat64, math.MaxFloat64),
				HowToFix: fmt.Sprintf("Send a number within that range for %s.", name),
			}
		}
	}
	return &InvalidArgumentsError{
		Message:  fmt.Sprintf("the arguments are not valid JSON (%v).", err),
		HowToFix: "Send the arguments as a single JSON object, for example {\"name\": \"value\"}.",
	}
}

// validate checks decoded arguments. It returns nil when they fit.
func (v *validator) validate(args any) *InvalidArgumentsError {
	if v.fast == nil {
		if err := v.resolved.Validate(args); err != nil {
			msg := strings.TrimPrefix(err.Error(), "validating root: ")
			return &InvalidArgumentsError{
				Message:  "the arguments do not match the parameters schema: " + msg + ".",
				HowToFix: "Correct the arguments named in the message and call the tool again.",
			}
		}
		return nil
	}
	var p problems
	v.fast.check(args, nil, &p)
	if len(p) == 0 {
		return nil
	}
	return p.err()
}

// problem is one validation failure.
type problem struct{ field, message, fix string }

type problems []problem

func (p problems) err() *InvalidArgumentsError {
	// Map iteration order is random; report problems in a stable order.
	slices.SortStableFunc(p, func(a, b problem) int {
		return cmp.Or(cmp.Compare(a.field, b.field), cmp.Compare(a.message, b.message))
	})
	msgs := make([]string, len(p))
	fixes := make([]string, 0, len(p))
	for i, q := range p {
		msgs[i] = q.message
		if q.fix != "" {
			fixes = append(fixes, q.fix)
		}
	}
	return &InvalidArgumentsError{
		Field:    p[0].field,
		Message:  strings.Join(msgs, "; ") + ".",
		HowToFix: strings.Join(fixes, " "),
	}
}

// path is an argument path built only when a problem is reported.
type path struct {
	parent *path
	key    string
	index  int // used when key == "" and parent != nil
	isIdx  bool
}

func (p *path) String() string {
	if p == nil {
		return ""
	}
	prefix := p.parent.String()
	if p.isIdx {
		return fmt.Sprintf("%s[%d]", prefix, p.index)
	}
	if prefix == "" {
		return p.key
	}
	return prefix + "." + p.key
}

func typeOf(v any) typeSet {
	switch x := v.(type) {
	case nil:
		return tNull
	case bool:
		return tBoolean
	case float64:
		if _, frac := math.Modf(x); frac == 0 {
			return tInteger
		}
		return tNumber
	case string:
		return tString
	case []any:
		return tArray
	case map[string]any:
		return tObject
	}
	return 0
}

// check validates v against n, appending problems. at is the path of v.
func (n *node) check(v any, at *path, p *problems) {
	name := func() string {
		if at == nil {
			return "the arguments"
		}
		return fmt.Sprintf("argument %q", at.String())
	}
	if n.never {
		*p = append(*p, problem{at.String(), name() + " is not allowed", fmt.Sprintf("Remove %q.", at.String())})
		return
	}
	t := typeOf(v)
	if n.types != 0 {
		ok := n.types&t != 0 || t == tInteger && n.types&tNumber != 0
		if !ok {
			got := t.describe()
			if t == tInteger {
				got = "a number" // report 3 as a number when an integer was not expected
			}
			fix := fmt.Sprintf("Pass %s for %q.", n.types.describe(), at.String())
			if at == nil {
				fix = "Send the arguments as a single JSON object."
			}
			*p = append(*p, problem{at.String(), fmt.Sprintf("%s must be %s, got %s", name(), n.types.describe(), got), fix})
			return
		}
	}
	if n.enum != nil {
		found := false
		for _, e := range n.enum {
			if jsonschema.Equal(e, v) {
				found = true
				break
			}
		}
		if !found {
			allowed, _ := json.Marshal(n.enum)
			got, _ := json.Marshal(v)
			*p = append(*p, problem{at.String(), fmt.Sprintf("%s must be one of %s, got %s", name(), allowed, got), fmt.Sprintf("Use one of the allowed values for %q.", at.String())})
		}
	}
	switch x := v.(type) {
	case float64:
		if n.minimum != nil && x < *n.minimum {
			*p = append(*p, problem{at.String(), fmt.Sprintf("%s must be at least %v, got %v", name(), *n.minimum, x), fmt.Sprintf("Pass a number of at least %v for %q.", *n.minimum, at.String())})
		}
		if n.maximum != nil && x > *n.maximum {
			*p = append(*p, problem{at.String(), fmt.Sprintf("%s must be at most %v, got %v", name(), *n.maximum, x), fmt.Sprintf("Pass a number of at most %v for %q.", *n.maximum, at.String())})
		}
	case string:
		if n.minLength != nil || n.maxLength != nil {
			c := utf8.RuneCountInString(x)
			if n.minLength != nil && c < *n.minLength {
				*p = append(*p, problem{at.String(), fmt.Sprintf("%s must have at least %d characters, got %d", name(), *n.minLength, c), ""})
			}
			if n.maxLength != nil && c > *n.maxLength {
				*p = append(*p, problem{at.String(), fmt.Sprintf("%s must have at most %d characters, got %d", name(), *n.maxLength, c), ""})
			}
		}
	case []any:
		if n.minItems != nil && len(x) < *n.minItems {
			*p = append(*p, problem{at.String(), fmt.Sprintf("%s must have at least %d items, got %d", name(), *n.minItems, len(x)), ""})
		}
		if n.maxItems != nil && len(x) > *n.maxItems {
			*p = append(*p, problem{at.String(), fmt.Sprintf("%s must have at most %d items, got %d", name(), *n.maxItems, len(x)), ""})
		}
		if n.items != nil {
			for i, item := range x {
				n.items.check(item, &path{parent: at, index: i, isIdx: true}, p)
			}
		}
	case map[string]any:
		n.checkObject(x, at, p)
	}
}

func (n *node) checkObject(obj map[string]any, at *path, p *problems) {
	for _, req := range n.required {
		if _, ok := obj[req]; !ok {
			child := &path{parent: at, key: req}
			msg := fmt.Sprintf("missing required argument %q", child.String())
			fix := fmt.Sprintf("Call the tool again with %q set", child.String())
			if sub := n.props[req]; sub != nil && sub.types != 0 {
				fix += " to " + sub.types.describe()
			}
			if sub := n.props[req]; sub != nil && sub.description != "" {
				fix += " (" + sub.description + ")"
			}
			*p = append(*p, problem{child.String(), msg, fix + "."})
		}
	}
	var unexpected []string
	for k, val := range obj {
		if sub, ok := n.props[k]; ok {
			sub.check(val, &path{parent: at, key: k}, p)
			continue
		}
		switch {
		case n.noAdditional:
			unexpected = append(unexpected, k)
		case n.additional != nil:
			n.additional.check(val, &path{parent: at, key: k}, p)
		}
	}
	if len(unexpected) > 0 {
		slices.Sort(unexpected)
		accepted := "this tool takes no arguments"
		if len(n.propNames) > 0 {
			accepted = "the accepted arguments are " + quoteList(n.propNames)
		}
		for _, k := range unexpected {
			child := (&path{parent: at, key: k}).String()
			*p = append(*p, problem{child, fmt.Sprintf("unexpected argument %q", child), fmt.Sprintf("Remove %q; %s.", child, accepted)})
		}
	}
}

func quoteList(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = fmt.Sprintf("%q", n)
	}
	return strings.Join(q, ", ")
}

// checkTypeNames rejects "type" values that are not JSON Schema type names
// (jsonschema-go accepts them, and no instance could ever match). It
// follows the common subschema keywords.
func checkTypeNames(v any, at string) error {
	obj, ok := v.(map[string]any)
	if !ok {
		return nil
	}
	if t, present := obj["type"]; present {
		if _, ok := compileTypes(t); !ok {
			return &SchemaError{Rule: RuleInvalid, Detail: fmt.Sprintf("%s: \"type\" %v is not a JSON Schema type", at, t)}
		}
	}
	for _, k := range []string{"properties", "$defs", "definitions", "patternProperties"} {
		if m, ok := obj[k].(map[string]any); ok {
			for _, name := range sortedKeys(m) {
				if err := checkTypeNames(m[name], at+"/"+k+"/"+name); err != nil {
					return err
				}
			}
		}
	}
	for _, k := range []string{"items", "additionalProperties", "not", "contains"} {
		if err := checkTypeNames(obj[k], at+"/"+k); err != nil {
			return err
		}
	}
	for _, k := range []string{"allOf", "anyOf", "oneOf", "prefixItems"} {
		if list, ok := obj[k].([]any); ok {
			for i, sub := range list {
				if err := checkTypeNames(sub, fmt.Sprintf("%s/%s/%d", at, k, i)); err != nil {
					return err
				}
			}
		}
	}
	return nil
}
