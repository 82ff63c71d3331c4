package deploy

import (
	"os"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// The k8s nodes serve the HTTP API (--http) and its /healthz and /readyz
// are their liveness and readiness probes, on the API's port.
func TestNodeProbes(t *testing.T) {
	b, err := os.ReadFile("k8s/weft-node.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Spec struct {
			Template struct {
				Spec struct {
					Containers []struct {
						Args  []string `yaml:"args"`
						Ports []struct {
							Name          string `yaml:"name"`
							ContainerPort int    `yaml:"containerPort"`
						} `yaml:"ports"`
						Liveness  probe `yaml:"livenessProbe"`
						Readiness probe `yaml:"readinessProbe"`
					} `yaml:"containers"`
				} `yaml:"spec"`
			} `yaml:"template"`
		} `yaml:"spec"`
	}
	if err := yaml.Unmarshal(b, &d); err != nil {
		t.Fatal(err)
	}
	cs := d.Spec.Template.Spec.Containers
	if len(cs) != 1 {
		t.Fatalf("%d containers, want 1", len(cs))
	}
	c := cs[0]
	var httpAddr string
	for _, a := range c.Args {
		if v, ok := strings.CutPrefix(a, "--http="); ok {
			httpAddr = v
		}
	}
	if !strings.HasSuffix(httpAddr, ":8080") || len(c.Ports) != 1 || c.Ports[0].ContainerPort != 8080 {
		t.Fatalf("--http %q, ports %+v: want the API on 8080, the container's port", httpAddr, c.Ports)
	}
	for _, p := range []struct {
		name string
		got  probe
		path string
	}{{"liveness", c.Liveness, "/healthz"}, {"readiness", c.Readiness, "/readyz"}} {
		if p.got.HTTPGet.Path != p.path || p.got.HTTPGet.Port != c.Ports[0].Name {
			t.Errorf("%s probe %+v, want GET %s on port %q", p.name, p.got.HTTPGet, p.path, c.Ports[0].Name)
		}
	}
}

type probe struct {
	HTTPGet struct {
		Path string `yaml:"path"`
		Port string `yaml:"port"`
	} `yaml:"httpGet"`
}
