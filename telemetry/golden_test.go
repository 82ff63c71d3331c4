package telemetry_test

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
)

var update = flag.Bool("update", false, "re-record the golden span trees in testdata")

// shownKeys are the attributes a golden tree shows.
var shownKeys = []string{
	"gen_ai.operation.name", "gen_ai.agent.name", "gen_ai.provider.name", "gen_ai.request.model", "gen_ai.response.model",
	"gen_ai.response.finish_reasons", "gen_ai.tool.name", "gen_ai.tool.call.id", "gen_ai.tool.type", "error.type",
	"weft.run.status", "weft.run.segment", "weft.tool.kind", "weft.tool.attempt", "weft.wait.reason", "mcp.method.name",
}

// tree renders spans as indented trees, one per root (a span whose parent
// is not among them), without ids or timings: name, kind, shown
// attributes, events, links (by the linked span's name) and whether a
// root's parent is a caller's span outside the set.
func tree(spans tracetest.SpanStubs) string {
	byID := map[trace.SpanID]tracetest.SpanStub{}
	for _, s := range spans {
		byID[s.SpanContext.SpanID()] = s
	}
	children := map[trace.SpanID][]tracetest.SpanStub{}
	var roots []tracetest.SpanStub
	for _, s := range spans {
		if p, ok := byID[s.Parent.SpanID()]; ok && s.Parent.IsValid() {
			children[p.SpanContext.SpanID()] = append(children[p.SpanContext.SpanID()], s)
		} else {
			roots = append(roots, s)
		}
	}
	// Spans in start order; the tool calls of one response (parallel,
	// started in any order) by their lines.
	order := func(list []tracetest.SpanStub) {
		slices.SortStableFunc(list, func(a, b tracetest.SpanStub) int { return a.StartTime.Compare(b.StartTime) })
		for i := 0; i < len(list); {
			j := i
			for j < len(list) && strings.HasPrefix(list[j].Name, "execute_tool ") {
				j++
			}
			slices.SortStableFunc(list[i:j], func(a, b tracetest.SpanStub) int { return strings.Compare(line(a, byID), line(b, byID)) })
			i = max(j, i+1)
		}
	}
	order(roots)
	var b strings.Builder
	var walk func(s tracetest.SpanStub, depth int)
	walk = func(s tracetest.SpanStub, depth int) {
		fmt.Fprintf(&b, "%s%s\n", strings.Repeat("  ", depth), line(s, byID))
		if p, ok := byID[s.Parent.SpanID()]; ok && p.SpanContext.TraceID() != s.SpanContext.TraceID() {
			fmt.Fprintf(&b, "%s  ! not in its parent's trace\n", strings.Repeat("  ", depth))
		}
		kids := children[s.SpanContext.SpanID()]
		order(kids)
		for _, k := range kids {
			walk(k, depth+1)
		}
	}
	for _, r := range roots {
		walk(r, 0)
	}
	return b.String()
}

func line(s tracetest.SpanStub, byID map[trace.SpanID]tracetest.SpanStub) string {
	parts := []string{s.Name, "[" + s.SpanKind.String() + "]"}
	if s.Parent.IsValid() {
		if _, ok := byID[s.Parent.SpanID()]; !ok {
			parts = append(parts, "(parent: "+s.Parent.SpanID().String()+" of trace "+s.Parent.TraceID().String()+")")
		}
	}
	for _, k := range shownKeys {
		for _, kv := range s.Attributes {
			if string(kv.Key) == k {
				parts = append(parts, k+"="+kv.Value.String())
			}
		}
	}
	for _, e := range s.Events {
		ev := "event:" + e.Name
		for _, kv := range e.Attributes {
			if kv.Key == "weft.tool.attempt" || kv.Key == "error.type" {
				ev += " " + string(kv.Key) + "=" + kv.Value.String()
			}
		}
		parts = append(parts, "{"+ev+"}")
	}
	for _, l := range s.Links {
		name := "?"
		if t, ok := byID[l.SpanContext.SpanID()]; ok && t.SpanContext.TraceID() == l.SpanContext.TraceID() {
			name = t.Name + " segment " + segmentOf(t)
		}
		parts = append(parts, "link→"+name)
	}
	return strings.Join(parts, " ")
}

func segmentOf(s tracetest.SpanStub) string {
	for _, kv := range s.Attributes {
		if kv.Key == "weft.run.segment" {
			return kv.Value.String()
		}
	}
	return "?"
}

// checkGolden compares got with testdata/name.golden (-update writes it).
func checkGolden(t *testing.T, name, got string) {
	t.Helper()
	file := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.WriteFile(file, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("%v (record it with -update)", err)
	}
	if d := cmp.Diff(string(want), got); d != "" {
		t.Errorf("span tree %s (-want +got):\n%s", name, d)
	}
}
