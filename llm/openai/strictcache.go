package openai

import (
	"encoding/json"
	"fmt"
	"sync"
)

// strictCache keeps decoded (and, for strict tools, converted) schemas,
// so that a conversation's tools are decoded once, not on every request.
// The cached values are shared and read-only.
type strictCache struct {
	mu sync.Mutex
	m  map[string]strictEntry
}

type strictEntry struct {
	schema map[string]any
	nulls  *nulls
}

// maxStrictCache bounds the cache; past it conversions are not kept.
const maxStrictCache = 1024

func (m *Model) schemaCached(tool string, strict bool, params json.RawMessage) (map[string]any, *nulls, error) {
	key := tool + "\x00" + string(params)
	if strict {
		key = "strict\x00" + key
	}
	c := m.strict
	c.mu.Lock()
	e, ok := c.m[key]
	c.mu.Unlock()
	if ok {
		return e.schema, e.nulls, nil
	}
	var s map[string]any
	var n *nulls
	var err error
	if strict {
		s, n, err = strictSchema(tool, params)
	} else if s, err = decodeSchema(params); err != nil {
		err = fmt.Errorf("%w: tool %q: parameters: %v", ErrUnsupported, tool, err)
	}
	if err != nil {
		return nil, nil, err
	}
	c.mu.Lock()
	if c.m == nil {
		c.m = map[string]strictEntry{}
	}
	if len(c.m) < maxStrictCache {
		c.m[key] = strictEntry{schema: s, nulls: n}
	}
	c.mu.Unlock()
	return s, n, nil
}
