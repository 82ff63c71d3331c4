package agentspec

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"
	"gopkg.in/yaml.v3"
)

// Schema is the JSON Schema (draft 2020-12) of a spec file, as committed
// in agents.schema.json. Load and Parse validate every file with it.
//
//go:embed agents.schema.json
var Schema []byte

var (
	schemaOnce sync.Once
	schemaRoot *jsonschema.Schema
	schemaErr  error
	resolvedMu sync.Mutex
	resolved   = map[string]*jsonschema.Resolved{}
)

func rootSchema() (*jsonschema.Schema, error) {
	schemaOnce.Do(func() {
		schemaRoot = new(jsonschema.Schema)
		schemaErr = json.Unmarshal(Schema, schemaRoot)
	})
	return schemaRoot, schemaErr
}

// resolvedAt returns the schema at ptr ("#/$defs/agent/properties/model")
// resolved for validation.
func resolvedAt(root *jsonschema.Schema, ptr string) (*jsonschema.Resolved, error) {
	resolvedMu.Lock()
	defer resolvedMu.Unlock()
	if r, ok := resolved[ptr]; ok {
		return r, nil
	}
	r, err := (&jsonschema.Schema{Schema: root.Schema, Defs: root.Defs, Ref: ptr}).Resolve(nil)
	if err != nil {
		return nil, fmt.Errorf("agentspec: resolve the schema at %s: %w", ptr, err)
	}
	resolved[ptr] = r
	return r, nil
}

// validate checks the document n against the schema; an error names the
// deepest node that does not match, its line and field.
func (d *decoder) validate(n *yaml.Node) error {
	root, err := rootSchema()
	if err != nil {
		return fmt.Errorf("agentspec: the embedded schema: %w", err)
	}
	return d.locate(n, root, "#", "")
}

// locate validates n against the schema s found at ptr; when it fails,
// it looks for a child of n that fails against its own schema, so that
// the error points at the innermost node at fault.
func (d *decoder) locate(n *yaml.Node, s *jsonschema.Schema, ptr, path string) error {
	root, _ := rootSchema()
	if s.Ref != "" {
		name, ok := strings.CutPrefix(s.Ref, "#/$defs/")
		if !ok || root.Defs[name] == nil {
			return fmt.Errorf("agentspec: the schema's $ref %q is not one of its $defs", s.Ref)
		}
		s, ptr = root.Defs[name], s.Ref
	}
	r, err := resolvedAt(root, ptr)
	if err != nil {
		return err
	}
	inst, err := instanceOf(n)
	if err != nil {
		return d.errorf(n, path, "%v", err)
	}
	verr := r.Validate(inst)
	if verr == nil {
		return nil
	}
	switch n.Kind {
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i].Value
			if sub, ok := s.Properties[k]; ok {
				if err := d.locate(n.Content[i+1], sub, ptr+"/properties/"+k, join(path, k)); err != nil {
					return err
				}
			} else if s.AdditionalProperties != nil {
				if err := d.locate(n.Content[i+1], s.AdditionalProperties, ptr+"/additionalProperties", join(path, k)); err != nil {
					return err
				}
			}
		}
	case yaml.SequenceNode:
		if s.Items != nil {
			for i, c := range n.Content {
				if err := d.locate(c, s.Items, ptr+"/items", fmt.Sprintf("%s[%d]", path, i)); err != nil {
					return err
				}
			}
		}
	}
	return d.errorf(n, path, "%s", schemaMsg(verr, s, inst))
}

// instanceOf is n as JSON would give it to a validator.
func instanceOf(n *yaml.Node) (any, error) {
	var x any
	if err := n.Decode(&x); err != nil {
		return nil, err
	}
	b, err := json.Marshal(x)
	if err != nil {
		return nil, err
	}
	var v any
	err = json.Unmarshal(b, &v)
	return v, err
}

// schemaMsg is the validator's complaint in one line; one that would
// name sub-schemas only (oneOf, anyOf, not) gives the schema's description
// instead. A string value is not repeated: the line and field say where
// it is, and a key pasted where a variable's name belongs must not reach
// a log.
func schemaMsg(err error, s *jsonschema.Schema, inst any) string {
	msg, _, _ := strings.Cut(err.Error(), "\n")
	// The validator prefixes "validating <pointer>: " per level.
	for {
		rest, ok := strings.CutPrefix(msg, "validating ")
		if !ok {
			break
		}
		_, after, ok := strings.Cut(rest, ": ")
		if !ok {
			break
		}
		msg = after
	}
	if v, ok := inst.(string); ok && v != "" {
		msg = strings.ReplaceAll(msg, strconv.Quote(v), "the value")
		if len(v) >= 4 {
			msg = strings.ReplaceAll(msg, v, "the value")
		}
	}
	kw, _, _ := strings.Cut(msg, ":")
	if v, ok := inst.(float64); ok && strings.Contains(kw, "imum") {
		// The validator prints numbers as fractions ("3/1").
		return "does not match the schema: " + strconv.FormatFloat(v, 'g', -1, 64) + " is not " + numberRange(s)
	}
	if (kw == "oneOf" || kw == "anyOf" || kw == "not") && s.Description != "" {
		return "does not match the schema: " + s.Description
	}
	return "does not match the schema: " + msg
}

// numberRange says which numbers s allows ("at least 0 and at most 2").
func numberRange(s *jsonschema.Schema) string {
	f := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	var parts []string
	if s.Minimum != nil {
		parts = append(parts, "at least "+f(*s.Minimum))
	}
	if s.ExclusiveMinimum != nil {
		parts = append(parts, "more than "+f(*s.ExclusiveMinimum))
	}
	if s.Maximum != nil {
		parts = append(parts, "at most "+f(*s.Maximum))
	}
	if s.ExclusiveMaximum != nil {
		parts = append(parts, "less than "+f(*s.ExclusiveMaximum))
	}
	return strings.Join(parts, " and ")
}
