package agentspec_test

import (
	"errors"
	"os"
	"testing"

	"github.com/weft-run/weft/agentspec"
)

// Parse never panics, and whatever it refuses it refuses with an *Error
// that names the file.
func FuzzParse(f *testing.F) {
	for _, path := range []string{"testdata/full.yaml", "testdata/example.yaml"} {
		data, err := os.ReadFile(path)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte(minimal))
	f.Add([]byte("version: 1\nagents: [{name: a, model: {name: 'openai-compatible:m', base_url: 'http://x'}, toolsets: [{search: {over: [{proxy: {over: []}}]}}]}]\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		_, err := agentspec.Parse("fuzz.yaml", data)
		var se *agentspec.Error
		if err != nil && (!errors.As(err, &se) || se.File != "fuzz.yaml") {
			t.Fatalf("Parse = %v, want an *agentspec.Error", err)
		}
	})
}
