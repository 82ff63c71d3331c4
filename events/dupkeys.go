package events

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// duplicateKey returns the first object member name that appears twice in
// one object of the JSON text data, at any depth ("" when none does). Such
// data is ambiguous — parsers keep the first or the last — so an append
// refuses it (PrepareAppend), while reads keep what stores already hold.
// data must be valid JSON.
func duplicateKey(data []byte) (string, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	type frame struct {
		object bool
		keys   map[string]struct{}
		key    bool // the next string token is a member name
	}
	var stack []frame
	for {
		tok, err := dec.Token()
		if err != nil {
			if len(stack) == 0 {
				return "", nil // end of the text
			}
			return "", err
		}
		var top *frame
		if len(stack) > 0 {
			top = &stack[len(stack)-1]
		}
		switch t := tok.(type) {
		case json.Delim:
			switch t {
			case '{':
				stack = append(stack, frame{object: true, key: true})
			case '[':
				stack = append(stack, frame{})
			default: // '}' or ']'
				stack = stack[:len(stack)-1]
				if n := len(stack); n > 0 && stack[n-1].object {
					stack[n-1].key = true
				}
			}
			if len(stack) == 0 {
				return "", nil
			}
			continue
		case string:
			if top != nil && top.object && top.key {
				if top.keys == nil {
					top.keys = map[string]struct{}{}
				}
				if _, dup := top.keys[t]; dup {
					return t, nil
				}
				top.keys[t] = struct{}{}
				top.key = false
				continue
			}
		}
		if top != nil && top.object {
			top.key = true // a member's value: the next string is a name
		}
		if len(stack) == 0 {
			return "", nil
		}
	}
}

// refuseDuplicateKeys is the error of data that names a member twice, nil
// otherwise.
func refuseDuplicateKeys(data []byte) error {
	k, err := duplicateKey(data)
	switch {
	case err != nil:
		return fmt.Errorf("%w: %v", ErrMalformed, err)
	case k != "":
		return fmt.Errorf("%w: member %q appears twice in one object", ErrMalformed, k)
	}
	return nil
}
