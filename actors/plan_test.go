package actors

import (
	"testing"

	"github.com/weft-run/weft/toolsets"
)

func TestSequentialBatch(t *testing.T) {
	defs := map[string]toolsets.Definition{
		"read":   {Name: "read", ConcurrentSafe: true},
		"search": {Name: "search", ConcurrentSafe: true},
		"write":  {Name: "write"},
		"audit":  {Name: "audit", Sequential: true},
		"both":   {Name: "both", Sequential: true, ConcurrentSafe: true},
		"other":  {Name: "other"},
	}
	lookup := func(name string) (toolsets.Definition, bool) {
		d, ok := defs[name]
		return d, ok
	}
	tests := []struct {
		name  string
		tools []string
		want  bool
	}{
		{name: "empty", want: false},
		{name: "distinct tools", tools: []string{"write", "other", "read"}, want: false},
		{name: "repeated unflagged tool (seed)", tools: []string{"write", "other", "write"}, want: true},
		{name: "sequential tool (seed)", tools: []string{"audit", "other"}, want: true},
		{name: "repeated concurrent-safe tool", tools: []string{"read", "read", "read", "read"}, want: false},
		{name: "two repeated concurrent-safe tools and a single write", tools: []string{"read", "search", "read", "write", "search"}, want: false},
		{name: "concurrent-safe repeated beside a repeated write", tools: []string{"read", "read", "write", "write"}, want: true},
		{name: "concurrent-safe repeated beside a sequential tool", tools: []string{"read", "read", "audit"}, want: true},
		{name: "sequential wins over concurrent-safe", tools: []string{"both", "other"}, want: true},
		{name: "repeated unknown tool", tools: []string{"gone", "gone"}, want: true},
		{name: "single unknown tool", tools: []string{"gone", "read", "read"}, want: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			calls := make([]BatchCall, len(tt.tools))
			for i, tool := range tt.tools {
				calls[i] = BatchCall{ID: string(rune('a' + i)), Tool: tool}
			}
			if got := sequentialBatch(calls, lookup); got != tt.want {
				t.Errorf("sequentialBatch(%v) = %v, want %v", tt.tools, got, tt.want)
			}
		})
	}
}
