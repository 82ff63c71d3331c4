package llm

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
)

// The JSON form of a Message:
//
//	{"role":"assistant","parts":[
//	  {"kind":"text","text":"Adding."},
//	  {"kind":"tool_call","id":"call_add","name":"add","arguments":{"left":2,"right":3}}]}
//
// Each part is its struct's JSON fields plus "kind". A tool call whose
// arguments are not valid JSON (a model's malformed output, kept as it
// came) carries them as a JSON string in "raw_arguments" instead of
// "arguments":
//
//	{"kind":"tool_call","id":"call_add","name":"add","raw_arguments":"{\"left\":"}
//
// Decoding gives the bytes back in ToolCall.Arguments; "raw_arguments"
// holding valid JSON, or both fields at once, is refused. Decoding is strict: an
// unknown kind is an *UnknownPartError, an unknown field, a missing role or
// a message that fails Validate is an error matching ErrInvalidMessage.
// Nothing is dropped or defaulted silently.

type messageWire struct {
	Role  Role              `json:"role"`
	Parts []json.RawMessage `json:"parts"`
}

// MarshalJSON encodes m in the form described above. It refuses a nil part.
func (m Message) MarshalJSON() ([]byte, error) {
	return m.AppendJSON(make([]byte, 0, 64*len(m.Parts)+32))
}

// AppendJSON appends what MarshalJSON returns to b (for a caller that
// encodes several messages into one buffer).
func (m Message) AppendJSON(b []byte) ([]byte, error) {
	if !plainToken(string(m.Role)) {
		w, err := m.marshalWire()
		if err != nil {
			return nil, err
		}
		return append(b, w...), nil
	}
	// What json.Marshal of the wire form writes, built in b.
	b = append(b, `{"role":"`...)
	b = append(b, m.Role...)
	b = append(b, `","parts":[`...)
	for i, p := range m.Parts {
		if i > 0 {
			b = append(b, ',')
		}
		var err error
		if b, err = appendPart(b, p); err != nil {
			return nil, fmt.Errorf("encode %s message part %d: %w", m.Role, i, err)
		}
	}
	return append(b, "]}"...), nil
}

// appendPart appends what marshalPart returns to b, through a pooled
// encoder (which writes what json.Marshal writes, and a newline).
func appendPart(b []byte, p Part) ([]byte, error) {
	v, err := wirePart(p)
	if err != nil {
		return nil, err
	}
	e := partEncoders.Get().(*partEncoder)
	defer partEncoders.Put(e)
	e.buf.Reset()
	if err := e.enc.Encode(v); err != nil {
		return nil, err
	}
	b = append(b, bytes.TrimSuffix(e.buf.Bytes(), []byte("\n"))...)
	if e.buf.Cap() > 64<<10 {
		e.buf = bytes.Buffer{} // do not keep a large buffer (e.enc writes to &e.buf)
	}
	return b, nil
}

// partEncoder is an encoder and the buffer it writes to.
type partEncoder struct {
	buf bytes.Buffer
	enc *json.Encoder
}

func newPartEncoder() *partEncoder {
	e := &partEncoder{}
	e.enc = json.NewEncoder(&e.buf)
	return e
}

var partEncoders = sync.Pool{New: func() any { return newPartEncoder() }}

// marshalWire is MarshalJSON through the wire struct.
func (m Message) marshalWire() ([]byte, error) {
	w := messageWire{Role: m.Role, Parts: make([]json.RawMessage, len(m.Parts))}
	for i, p := range m.Parts {
		b, err := marshalPart(p)
		if err != nil {
			return nil, fmt.Errorf("encode %s message part %d: %w", m.Role, i, err)
		}
		w.Parts[i] = b
	}
	return json.Marshal(w)
}

// plainToken reports whether s is a JSON string that encodes as itself
// between quotes: lower-case letters, digits, '_' and '-'.
func plainToken(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if (c < 'a' || c > 'z') && (c < '0' || c > '9') && c != '_' && c != '-' {
			return false
		}
	}
	return true
}

// UnmarshalJSON decodes m strictly (see the JSON form above) and validates
// it. On error m is left unchanged.
func (m *Message) UnmarshalJSON(data []byte) error {
	var w messageWire
	if err := strictUnmarshal(data, &w); err != nil {
		return fmt.Errorf("%w: %v", ErrInvalidMessage, err)
	}
	out := Message{Role: w.Role, Parts: make([]Part, len(w.Parts))}
	for i, raw := range w.Parts {
		p, err := unmarshalPart(raw)
		if err != nil {
			return fmt.Errorf("decode %s message part %d: %w", w.Role, i, err)
		}
		out.Parts[i] = p
	}
	if err := out.Validate(); err != nil {
		return err
	}
	*m = out
	return nil
}

// The wire forms: a part's fields plus its kind. The embedded struct's
// fields are promoted into the same JSON object.
type (
	instructionsWire struct {
		Kind PartKind `json:"kind"`
		Instructions
	}
	userPromptWire struct {
		Kind PartKind `json:"kind"`
		UserPrompt
	}
	textWire struct {
		Kind PartKind `json:"kind"`
		Text
	}
	toolCallWire struct {
		Kind PartKind `json:"kind"`
		toolCallJSON
	}
	toolReturnWire struct {
		Kind PartKind `json:"kind"`
		ToolReturn
	}
	retryPromptWire struct {
		Kind PartKind `json:"kind"`
		RetryPrompt
	}
)

func marshalPart(p Part) ([]byte, error) {
	v, err := wirePart(p)
	if err != nil {
		return nil, err
	}
	return json.Marshal(v)
}

// wirePart is p's wire form (its fields plus its kind).
func wirePart(p Part) (any, error) {
	switch p := p.(type) {
	case Instructions:
		return instructionsWire{p.Kind(), p}, nil
	case UserPrompt:
		return userPromptWire{p.Kind(), p}, nil
	case Text:
		return textWire{p.Kind(), p}, nil
	case ToolCall:
		return toolCallWire{p.Kind(), p.wire()}, nil
	case ToolReturn:
		return toolReturnWire{p.Kind(), p}, nil
	case RetryPrompt:
		return retryPromptWire{p.Kind(), p}, nil
	case nil:
		return nil, fmt.Errorf("%w: nil part", ErrInvalidMessage)
	}
	// Unreachable while Part is sealed.
	return nil, &UnknownPartError{Kind: string(p.Kind())}
}

func unmarshalPart(data []byte) (Part, error) {
	var head struct {
		Kind *PartKind `json:"kind"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidMessage, err)
	}
	if head.Kind == nil {
		return nil, fmt.Errorf("%w: part without a kind", ErrInvalidMessage)
	}
	var (
		p   Part
		err error
	)
	switch *head.Kind {
	case KindInstructions:
		var w instructionsWire
		err = strictUnmarshal(data, &w)
		p = w.Instructions
	case KindUserPrompt:
		var w userPromptWire
		err = strictUnmarshal(data, &w)
		p = w.UserPrompt
	case KindText:
		var w textWire
		err = strictUnmarshal(data, &w)
		p = w.Text
	case KindToolCall:
		var w toolCallWire
		if err = strictUnmarshal(data, &w); err == nil {
			p, err = w.toolCall()
		}
	case KindToolReturn:
		var w toolReturnWire
		err = strictUnmarshal(data, &w)
		p = w.ToolReturn
	case KindRetryPrompt:
		var w retryPromptWire
		err = strictUnmarshal(data, &w)
		p = w.RetryPrompt
	default:
		return nil, &UnknownPartError{Kind: string(*head.Kind)}
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %s part: %v", ErrInvalidMessage, *head.Kind, err)
	}
	return p, nil
}

// strictUnmarshal decodes exactly one JSON value into v, refusing unknown
// fields and trailing data.
func strictUnmarshal(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return errors.New("trailing data after JSON value")
	}
	return nil
}

// toolCallJSON is the JSON form of a ToolCall: arguments that are not valid
// JSON travel as the string raw_arguments (see the JSON form above).
type toolCallJSON struct {
	ID           string          `json:"id"`
	Name         string          `json:"name"`
	Arguments    json.RawMessage `json:"arguments,omitempty"`
	RawArguments string          `json:"raw_arguments,omitempty"`
}

func (c ToolCall) wire() toolCallJSON {
	w := toolCallJSON{ID: c.ID, Name: c.Name, Arguments: c.Arguments}
	if len(c.Arguments) > 0 && !json.Valid(c.Arguments) {
		w.Arguments, w.RawArguments = nil, string(c.Arguments)
	}
	return w
}

func (w toolCallJSON) toolCall() (ToolCall, error) {
	switch {
	case w.RawArguments != "" && len(w.Arguments) > 0:
		return ToolCall{}, errors.New("both arguments and raw_arguments")
	case w.RawArguments != "" && json.Valid([]byte(w.RawArguments)):
		return ToolCall{}, errors.New("raw_arguments holds valid JSON; it belongs in arguments")
	case w.RawArguments != "":
		w.Arguments = json.RawMessage(w.RawArguments)
	}
	return ToolCall{ID: w.ID, Name: w.Name, Arguments: w.Arguments}, nil
}

// MarshalJSON encodes c as {"id","name","arguments"}, or with
// "raw_arguments" (a JSON string) instead of "arguments" when its arguments
// are not valid JSON, so that a response holding a model's malformed
// arguments still encodes.
func (c ToolCall) MarshalJSON() ([]byte, error) { return json.Marshal(c.wire()) }

// UnmarshalJSON decodes the form MarshalJSON writes.
func (c *ToolCall) UnmarshalJSON(data []byte) error {
	var w toolCallJSON
	if err := json.Unmarshal(data, &w); err != nil {
		return err
	}
	tc, err := w.toolCall()
	if err != nil {
		return fmt.Errorf("%w: tool call: %v", ErrInvalidMessage, err)
	}
	*c = tc
	return nil
}
