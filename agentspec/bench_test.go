package agentspec_test

import (
	"os"
	"testing"

	"github.com/weft-run/weft/agentspec"
)

// BenchmarkParse measures loading the full example file (decode, schema
// validation, checks).
func BenchmarkParse(b *testing.B) {
	b.Setenv("AGENTSPEC_TEST_KEY", "x")
	data, err := os.ReadFile("testdata/full.yaml")
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := agentspec.Parse("testdata/full.yaml", data); err != nil {
			b.Fatal(err)
		}
	}
}
