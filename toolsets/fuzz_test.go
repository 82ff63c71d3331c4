package toolsets

import (
	"encoding/json"
	"testing"
)

// fuzzSchemas cover the fast validator's keywords; each is also validated
// by jsonschema-go, and the two must agree.
var fuzzSchemas = []string{
	`{"type":"object","properties":{"left":{"type":"integer"},"right":{"type":"integer"}},"required":["left","right"],"additionalProperties":false}`,
	`{"type":"object","properties":{"ticket_id":{"type":"string","minLength":1,"maxLength":8},"include_history":{"type":"boolean"},"labels":{"type":["null","array"],"items":{"type":"string"},"maxItems":2}},"required":["ticket_id"],"additionalProperties":false}`,
	`{"type":"object","additionalProperties":true}`,
	`{"type":"object","properties":{"mode":{"enum":["review","ship",1,null]},"n":{"type":"number","minimum":-1.5,"maximum":10}},"additionalProperties":{"type":"string"}}`,
	`{"type":"object","properties":{"nested":{"type":"object","properties":{"x":{"type":"integer"}},"required":["x"]},"never":false}}`,
}

// FuzzValidateArguments decodes arbitrary argument bytes and validates them
// against each schema with the compiled validator and with jsonschema-go:
// it must never panic, the two must agree on accept/reject, and a rejection
// must carry a message.
func FuzzValidateArguments(f *testing.F) {
	for _, seed := range []string{
		`{"left":2,"right":3}`, `{"left":2.0,"right":-3}`, `{"left":2.5,"right":3}`, `{"left":2}`,
		`{"left":2,"right":3,"extra":null}`, `{"ticket_id":"T-1","labels":["a","b","c"]}`,
		`{"ticket_id":"","labels":null}`, `{"ticket_id":"ééééééééé"}`, `{"mode":"ship","n":10}`,
		`{"mode":1.0,"n":-2}`, `{"nested":{"x":1}}`, `{"nested":{}}`, `{"never":1}`, `{"zz":"s"}`,
		`[]`, `null`, `"x"`, `1e400`, `{"left":`, ``, `{}`, `{"a":{"b":[1,{"c":true}]}}`,
		`{"left":2,"right":3,"left":4}`, `{"a":{"b":[1,{"c":true,"c":false}]}}`, `{"\u006c":1,"l":2}`,
		`{"n":[1,-1e400]}`, `{"n":1e-400}`, `{"n":123456789012345678901234567890}`,
	} {
		f.Add([]byte(seed))
	}
	validators := make([]*validator, len(fuzzSchemas))
	for i, s := range fuzzSchemas {
		v, err := newValidator(json.RawMessage(s))
		if err != nil {
			f.Fatalf("schema %d: %v", i, err)
		}
		if v.fast == nil {
			f.Fatalf("schema %d did not compile to the fast validator", i)
		}
		validators[i] = v
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		// The duplicate and range checks agree with their references.
		if json.Valid(raw) {
			refPath, refDup := refDuplicate(raw)
			p := scanArguments(raw, false)
			if (p != nil) != refDup || p != nil && p.field() != refPath {
				t.Fatalf("%s: duplicate scan %+v, reference %q %v", raw, p, refPath, refDup)
			}
			if !refDup {
				np := scanArguments(raw, true)
				if (np != nil) != refOutOfRange(raw) {
					t.Fatalf("%s: range scan %+v, reference %v", raw, np, refOutOfRange(raw))
				}
			}
		}
		args, ia := decodeArguments(raw)
		if ia == nil {
			if _, dup := refDuplicate(raw); dup {
				t.Fatalf("%s: accepted with a duplicate member", raw)
			}
		}
		if ia != nil {
			if ia.Message == "" || ia.HowToFix == "" {
				t.Fatalf("decode error without message or fix: %+v", ia)
			}
			return
		}
		for i, v := range validators {
			fastErr := v.validate(args)
			slowErr := v.resolved.Validate(args)
			if (fastErr == nil) != (slowErr == nil) {
				t.Fatalf("schema %d, args %s: fast=%v general=%v", i, raw, fastErr, slowErr)
			}
			if fastErr != nil && fastErr.Message == "" {
				t.Fatalf("schema %d: rejection without a message", i)
			}
		}
	})
}
