package events

import (
	"encoding/json"
	"fmt"
	"strconv"
)

// AppendJSON appends the JSON envelope of ev to b, byte for byte what
// json.Marshal gives for an Event, without reflection (the runtime and the
// JetStream store encode one envelope per event on their hot paths). With
// withPosition false the "position" member is left out (the JetStream store
// keeps the Position as the message's sequence, not in its body).
//
// ev.Data is spliced in as it is: it must be valid, compact JSON, as
// PrepareAppend requires of appended events (json.Marshal would compact and
// HTML-escape it). Strings that need escaping go through encoding/json. It
// fails only for a Time that json.Marshal refuses.
//
// An event with Blob set is written as it is stored: Data is
// Blob.EventData() and there is no "blob" member (json.Marshal writes the
// resolved Data and the "blob" member).
func AppendJSON(b []byte, ev *Event, withPosition bool) ([]byte, error) {
	t, err := ev.Time.MarshalJSON()
	if err != nil {
		return nil, fmt.Errorf("encode event %s: %w", ev.ID, err)
	}
	b = append(b, `{"id":"`...)
	b = append(b, ev.ID.String()...)
	b = append(b, `","stream":`...)
	b = appendJSONString(b, ev.Stream)
	b = append(b, `,"version":`...)
	b = strconv.AppendUint(b, ev.Version, 10)
	if withPosition {
		b = append(b, `,"position":`...)
		b = strconv.AppendUint(b, ev.Position, 10)
	}
	b = append(b, `,"type":`...)
	b = appendJSONString(b, string(ev.Type))
	b = append(b, `,"schema_version":`...)
	b = strconv.AppendInt(b, int64(ev.SchemaVersion), 10)
	b = append(b, `,"time":`...)
	b = append(b, t...)
	for _, f := range [...]struct{ key, val string }{
		{`,"session_id":`, ev.SessionID}, {`,"run_id":`, ev.RunID}, {`,"tool_call_id":`, ev.ToolCallID},
		{`,"correlation_id":`, ev.CorrelationID}, {`,"causation_id":`, ev.CausationID},
		{`,"prev_hash":`, ev.PrevHash}, {`,"key_id":`, ev.KeyID}, {`,"mac":`, ev.MAC},
	} {
		if f.val != "" {
			b = append(b, f.key...)
			b = appendJSONString(b, f.val)
		}
	}
	if ev.Blob != nil {
		b = append(b, `,"data":`...)
		b = append(b, ev.Blob.EventData()...)
	} else if len(ev.Data) > 0 {
		b = append(b, `,"data":`...)
		b = append(b, ev.Data...)
	}
	if len(ev.Redacted) > 0 {
		b = append(b, `,"redacted":[`...)
		for i, r := range ev.Redacted {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendJSONString(b, r)
		}
		b = append(b, ']')
	}
	return append(b, '}'), nil
}

// SizeHint returns a buffer capacity that holds ev's AppendJSON encoding
// unless its strings need escaping: encoders allocate it once.
func SizeHint(ev *Event) int {
	data := len(ev.Data)
	if ev.Blob != nil {
		data = 128
	}
	// The member names, the quotes, the id, the numbers and the time take
	// at most 345 bytes; the strings and the data take their length.
	return 345 + len(ev.Stream) + len(ev.Type) + len(ev.SessionID) + len(ev.RunID) + len(ev.ToolCallID) +
		len(ev.CorrelationID) + len(ev.CausationID) + len(ev.PrevHash) + len(ev.KeyID) + len(ev.MAC) + data
}

// appendJSONString appends s as a JSON string, as encoding/json writes it.
func appendJSONString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			q, _ := json.Marshal(s) // a string always encodes
			return append(b, q...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}
