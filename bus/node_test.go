package bus_test

import (
	"errors"
	"testing"

	"github.com/nats-io/nats-server/v2/server"

	"github.com/weft-run/weft/bus"
)

func TestNodeCommandRoundTrip(t *testing.T) {
	tests := []struct {
		name, node, session, verb string
		want                      string
	}{
		{name: "plain", node: "n1", session: "42", verb: "start", want: "weft.node.n1.cmd.session.42.start"},
		{name: "escaped session", node: "node-a", session: "a.b", verb: "resume", want: "weft.node.node-a.cmd.session.a%2Eb.resume"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := bus.Default.NodeCommand(tc.node, tc.session, tc.verb)
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Fatalf("NodeCommand = %q, want %q", got, tc.want)
			}
			id, verb, err := bus.Default.ParseNodeCommand(tc.node, got)
			if err != nil {
				t.Fatal(err)
			}
			if id != tc.session || verb != tc.verb {
				t.Fatalf("ParseNodeCommand = %q, %q; want %q, %q", id, verb, tc.session, tc.verb)
			}
		})
	}
}

func TestNodeCommandRejectsBadNode(t *testing.T) {
	for _, node := range []string{"", "a.b", "*", ">"} {
		if _, err := bus.Default.NodeCommand(node, "s", "start"); !errors.Is(err, bus.ErrInvalidToken) {
			t.Errorf("NodeCommand(%q) error = %v, want ErrInvalidToken", node, err)
		}
		if _, err := bus.Default.NodeCommands(node); !errors.Is(err, bus.ErrInvalidToken) {
			t.Errorf("NodeCommands(%q) error = %v, want ErrInvalidToken", node, err)
		}
	}
	if _, _, err := bus.Default.ParseNodeCommand("n1", "weft.node.n2.cmd.session.s.start"); !errors.Is(err, bus.ErrInvalidToken) {
		t.Errorf("ParseNodeCommand of another node's subject: error = %v", err)
	}
}

func TestNodeTool(t *testing.T) {
	tests := []struct {
		name, node, tool string
		want             string
	}{
		{name: "plain", node: "n1", tool: "search", want: "weft.node.n1.tool.search"},
		{name: "escaped tool", node: "node-a", tool: "web.search", want: "weft.node.node-a.tool.web%2Esearch"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := bus.Default.NodeTool(tc.node, tc.tool)
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Fatalf("NodeTool = %q, want %q", got, tc.want)
			}
			filter, err := bus.Default.NodeTools(tc.node)
			if err != nil {
				t.Fatal(err)
			}
			if !server.SubjectMatchesFilter(got, filter) {
				t.Errorf("%q does not match %q", got, filter)
			}
			other, err := bus.Default.NodeTools("other")
			if err != nil {
				t.Fatal(err)
			}
			if server.SubjectMatchesFilter(got, other) {
				t.Errorf("%q matches another node's filter %q", got, other)
			}
		})
	}
}

func TestNodeToolRejectsBadInput(t *testing.T) {
	for _, node := range []string{"", "a.b", "*", ">"} {
		if _, err := bus.Default.NodeTool(node, "search"); !errors.Is(err, bus.ErrInvalidToken) {
			t.Errorf("NodeTool(%q) error = %v, want ErrInvalidToken", node, err)
		}
		if _, err := bus.Default.NodeTools(node); !errors.Is(err, bus.ErrInvalidToken) {
			t.Errorf("NodeTools(%q) error = %v, want ErrInvalidToken", node, err)
		}
	}
	if _, err := bus.Default.NodeTool("n1", ""); !errors.Is(err, bus.ErrInvalidToken) {
		t.Errorf("NodeTool of an empty tool name: error = %v", err)
	}
}
