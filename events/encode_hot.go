package events

import (
	"bytes"
	"encoding/json"
	"slices"
	"strconv"
	"unicode/utf8"
)

// Hand-written encoders for the data of the events every run records
// (run.started, model.request, model.response, tool.requested,
// tool.started, tool.returned, run.completed). They write what
// marshalReflect writes for the same value, byte for byte: compact JSON
// without HTML escaping, the fields in declaration order, omitempty as
// encoding/json reads it, strings escaped as encoding/json escapes them,
// map keys sorted. They exist because NewData runs for every step of a
// run and encoding/json pays there for reflection and for a validating
// compaction of every json.RawMessage (the model request's messages hold
// the whole conversation).
//
// A json.RawMessage is still checked: it is copied as it is when the
// scanner of the fast decoder (cursor.skipValue, one pass) takes it as one
// JSON value with no white space outside its strings, which is what weft's own
// encodings are; anything else goes through json.Compact, as encoding/json
// would. When an encoder fails (a RawMessage that is not JSON, or an empty
// one where encoding/json writes it anyway), marshalSealable encodes the value
// with encoding/json instead, so that the error is the one it always was.

// hotEncoder is implemented by the data structs that have a hand-written
// encoder: appendJSON appends the value's encoding to dst.
type hotEncoder interface {
	appendJSON(dst []byte) ([]byte, error)
}

var (
	_ hotEncoder = RunStarted{}
	_ hotEncoder = RunCompleted{}
	_ hotEncoder = ModelRequest{}
	_ hotEncoder = ModelResponse{}
	_ hotEncoder = ToolRequested{}
	_ hotEncoder = ToolStarted{}
	_ hotEncoder = ToolReturned{}
	_ hotEncoder = UsageSnapshot{}
)

func (d RunStarted) appendJSON(b []byte) ([]byte, error) {
	var o obj
	b = o.str(b, `"agent":`, d.Agent, true)
	b, err := o.raw(b, `"input":`, d.Input, true)
	if err != nil {
		return nil, err
	}
	b = o.str(b, `"parent_run_id":`, d.ParentRunID, true)
	b = o.str(b, `"parent_session_id":`, d.ParentSessionID, true)
	b = o.str(b, `"parent_tool_call_id":`, d.ParentToolCallID, true)
	b = o.int(b, `"depth":`, int64(d.Depth), true)
	b, err = o.raw(b, `"metadata":`, d.Metadata, true)
	if err != nil {
		return nil, err
	}
	return o.end(b), nil
}

func (d RunCompleted) appendJSON(b []byte) ([]byte, error) {
	var o obj
	b, err := o.raw(b, `"output":`, d.Output, true)
	if err != nil {
		return nil, err
	}
	if d.Usage != nil {
		b = d.Usage.appendJSON(o.name(b, `"usage":`))
	}
	return o.end(b), nil
}

func (d ModelRequest) appendJSON(b []byte) ([]byte, error) {
	var o obj
	b = o.str(b, `"model":`, d.Model, false)
	b, err := o.raw(b, `"messages":`, d.Messages, true)
	if err != nil {
		return nil, err
	}
	b = o.strs(b, `"tools":`, d.Tools)
	return o.end(b), nil
}

func (d ModelResponse) appendJSON(b []byte) ([]byte, error) {
	var o obj
	b = o.str(b, `"model":`, d.Model, false)
	b, err := o.raw(b, `"message":`, d.Message, true)
	if err != nil {
		return nil, err
	}
	b = o.str(b, `"finish_reason":`, d.FinishReason, true)
	b = o.strs(b, `"tool_call_ids":`, d.ToolCallIDs)
	if d.Usage != nil {
		b = d.Usage.appendJSON(o.name(b, `"usage":`))
	}
	b = o.int(b, `"attempts":`, int64(d.Attempts), true)
	b = o.str(b, `"output_rejected":`, d.OutputRejected, true)
	if a := d.RequestAmended; a != nil {
		b = o.name(b, `"request_amended":`)
		var ao obj
		b = ao.str(b, `"digest_before":`, a.DigestBefore, false)
		b = ao.str(b, `"digest_after":`, a.DigestAfter, false)
		b = ao.end(b)
	}
	return o.end(b), nil
}

func (d ToolRequested) appendJSON(b []byte) ([]byte, error) {
	var o obj
	b = o.str(b, `"tool":`, d.Tool, false)
	b = o.str(b, `"toolset":`, d.Toolset, true)
	b, err := o.raw(b, `"arguments":`, d.Arguments, true)
	if err != nil {
		return nil, err
	}
	b = o.str(b, `"raw_arguments":`, d.RawArguments, true)
	b = o.str(b, `"parent":`, d.Parent, true)
	return o.end(b), nil
}

func (d ToolStarted) appendJSON(b []byte) ([]byte, error) {
	var o obj
	b = o.str(b, `"tool":`, d.Tool, false)
	b = o.int(b, `"attempt":`, int64(d.Attempt), false)
	b = o.str(b, `"node":`, d.Node, true)
	return o.end(b), nil
}

func (d ToolReturned) appendJSON(b []byte) ([]byte, error) {
	var o obj
	b = o.str(b, `"tool":`, d.Tool, false)
	b, err := o.raw(b, `"return":`, d.Return, false)
	if err != nil {
		return nil, err
	}
	if d.IsError {
		b = append(o.name(b, `"is_error":`), "true"...)
	}
	b = o.int(b, `"attempt":`, int64(d.Attempt), true)
	if e := d.Error; e != nil {
		b = e.appendJSON(o.name(b, `"error":`))
	}
	return o.end(b), nil
}

func (d UsageSnapshot) appendJSON(b []byte) ([]byte, error) {
	var o obj
	b = o.str(b, `"scope":`, d.Scope, true)
	b = d.Usage.appendJSON(o.name(b, `"usage":`))
	return o.end(b), nil
}

func (e *ErrorInfo) appendJSON(b []byte) []byte {
	var o obj
	b = o.str(b, `"kind":`, e.Kind, true)
	b = o.str(b, `"message":`, e.Message, false)
	b = o.str(b, `"type":`, e.Type, true)
	return o.end(b)
}

func (u *Usage) appendJSON(b []byte) []byte {
	var o obj
	b = o.int(b, `"requests":`, u.Requests, true)
	b = o.int(b, `"input_tokens":`, u.InputTokens, true)
	b = o.int(b, `"output_tokens":`, u.OutputTokens, true)
	b = o.int(b, `"cache_read_tokens":`, u.CacheReadTokens, true)
	b = o.int(b, `"cache_write_tokens":`, u.CacheWriteTokens, true)
	b = o.int(b, `"tool_calls":`, u.ToolCalls, true)
	if len(u.Details) > 0 {
		b = o.name(b, `"details":`)
		var arr [16]string
		keys := arr[:0]
		for k := range u.Details {
			keys = append(keys, k)
		}
		slices.Sort(keys) // byte order, as encoding/json sorts map keys
		b = append(b, '{')
		for i, k := range keys {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendJSONStringExact(b, k)
			b = append(b, ':')
			b = strconv.AppendInt(b, u.Details[k], 10)
		}
		b = append(b, '}')
	}
	return o.end(b)
}

// obj writes the members of one JSON object: the first member written
// opens it, end closes it (or writes {} when no member was written).
type obj struct{ open bool }

// name writes the separator before a member and its quoted name and colon
// (key, a literal that needs no escaping).
func (o *obj) name(b []byte, key string) []byte {
	if o.open {
		b = append(b, ',')
	} else {
		b = append(b, '{')
		o.open = true
	}
	return append(b, key...)
}

func (o *obj) end(b []byte) []byte {
	if !o.open {
		return append(b, '{', '}')
	}
	return append(b, '}')
}

// str writes a string member; omitEmpty leaves out "".
func (o *obj) str(b []byte, key, s string, omitEmpty bool) []byte {
	if omitEmpty && s == "" {
		return b
	}
	return appendJSONStringExact(o.name(b, key), s)
}

// int writes an integer member; omitEmpty leaves out 0.
func (o *obj) int(b []byte, key string, n int64, omitEmpty bool) []byte {
	if omitEmpty && n == 0 {
		return b
	}
	return strconv.AppendInt(o.name(b, key), n, 10)
}

// strs writes an omitempty []string member.
func (o *obj) strs(b []byte, key string, ss []string) []byte {
	if len(ss) == 0 {
		return b
	}
	b = append(o.name(b, key), '[')
	for i, s := range ss {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendJSONStringExact(b, s)
	}
	return append(b, ']')
}

// raw writes a json.RawMessage member: omitEmpty leaves out an empty one;
// otherwise nil is null, as encoding/json writes it.
func (o *obj) raw(b []byte, key string, m json.RawMessage, omitEmpty bool) ([]byte, error) {
	if len(m) == 0 && (omitEmpty || m == nil) {
		if omitEmpty {
			return b, nil
		}
		return append(o.name(b, key), "null"...), nil
	}
	return appendCompactJSON(o.name(b, key), m)
}

// appendCompactJSON appends the JSON value m without white space outside
// its strings, as encoding/json writes a json.RawMessage, and fails where
// it fails (m not one JSON value).
func appendCompactJSON(b, m []byte) ([]byte, error) {
	c := cursor{data: m}
	if v, ok := c.skipValue(); ok && len(v) == len(m) && !c.spaced {
		return append(b, m...), nil
	}
	buf := bytes.NewBuffer(b)
	if err := json.Compact(buf, m); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// appendJSONStringExact appends s as a JSON string exactly as encoding/json
// writes it with HTML escaping off: ", \ and control characters escaped
// (\b \f \n \r \t short, the others \u00XX), a byte that is not UTF-8 as
// \ufffd, U+2028 and U+2029 as \u2028 and \u2029, all else as it is.
func appendJSONStringExact(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

const hexDigits = "0123456789abcdef"
