package codemode_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/weft-run/weft/toolsets"
)

// benchProgram is 20 lines with 5 tool calls.
const benchProgram = `total = 0
names = []
for i in range(3):
    names.append("n%d" % i)
a = add(1, 2)
total += a
b = add(a, b=10)
total += b
if total > 10:
    c = add(total, 1)
else:
    c = add(0, 0)
words = {"a": a, "b": b, "c": c}
d = add(len(words), c)
keys = sorted(words.keys())
e = add(d, len(keys))
summary = ", ".join(["%s=%d" % (k, words[k]) for k in keys])
print(summary)
print("total", total + e)
{"total": total + e, "names": names}`

func benchJournal() []toolsets.Return {
	vals := []string{"3", "13", "17", "20", "23"}
	out := make([]toolsets.Return, len(vals))
	for i, v := range vals {
		out[i] = toolsets.Return{ToolName: "add", Kind: toolsets.KindSuccess, Success: true, Content: json.RawMessage(v)}
	}
	return out
}

// BenchmarkProgram runs a 20-line program with 5 tool calls: fresh (its
// first run and the five replays that follow, as the runtime runs it when
// each call's return arrives) and resumed from a full journal (one run,
// as after a restart).
func BenchmarkProgram(b *testing.B) {
	if n := strings.Count(benchProgram, "\n") + 1; n != 20 {
		b.Fatalf("the program has %d lines", n)
	}
	env := testEnv(b)
	journal := benchJournal()
	b.Run("fresh", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			for n := 0; ; n++ {
				out, err := env.Run(b.Context(), benchProgram, &toolsets.CodeInput{Journal: journal[:n]})
				if err != nil {
					b.Fatal(err)
				}
				if out.Call == nil {
					if n != 5 {
						b.Fatalf("finished after %d calls", n)
					}
					break
				}
			}
		}
	})
	b.Run("resumed", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			out, err := env.Run(b.Context(), benchProgram, &toolsets.CodeInput{Journal: journal})
			if err != nil || out.Call != nil {
				b.Fatal(err, out)
			}
		}
	})
}
