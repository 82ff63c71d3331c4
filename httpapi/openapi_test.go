package httpapi

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"gopkg.in/yaml.v3"
)

// The OpenAPI document lists exactly the registered operations, each with
// the role the route requires (x-weft-role; public ones with security: []).
func TestOpenAPIMatchesRoutes(t *testing.T) {
	var doc struct {
		OpenAPI string                          `yaml:"openapi"`
		Paths   map[string]map[string]yaml.Node `yaml:"paths"`
	}
	if err := yaml.Unmarshal(OpenAPI, &doc); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(doc.OpenAPI, "3.1") {
		t.Fatalf("openapi %q, want 3.1", doc.OpenAPI)
	}
	inDoc := map[string]string{}
	for path, ops := range doc.Paths {
		for method, node := range ops {
			if method == "parameters" {
				continue
			}
			var op struct {
				Role     string `yaml:"x-weft-role"`
				Security []any  `yaml:"security"`
			}
			if err := node.Decode(&op); err != nil {
				t.Fatal(err)
			}
			role := op.Role
			if role == "" && op.Security == nil {
				role = "(none given)"
			}
			inDoc[strings.ToUpper(method)+" "+path] = role
		}
	}
	routed := map[string]string{}
	for _, r := range (&API{}).routes() {
		routed[r.method+" "+r.pattern] = string(r.role)
	}
	if diff := cmp.Diff(routed, inDoc); diff != "" {
		t.Errorf("routes (-registered +document):\n%s", diff)
	}
	if !slices.Contains(slicesKeys(routed), "GET /v1/sessions/{session}/events") {
		t.Error("the session event stream is not routed")
	}
}

func slicesKeys(m map[string]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
