package main

import (
	"errors"
	"strings"
	"testing"

	"github.com/weft-run/weft/projections"
)

func TestResolveID(t *testing.T) {
	ids := []string{"0193ab-1111", "0193ab-2222", "0194cd-3333", "abc"}
	tests := []struct {
		in, want string
		err      error
	}{
		{"0193ab-1111", "0193ab-1111", nil}, // whole
		{"0194", "0194cd-3333", nil},        // a unique prefix
		{"0193ab-2", "0193ab-2222", nil},
		{"0193", "", errAmbiguousID}, // two
		{"019", "019", nil},          // too short to be a prefix: taken whole (unknown)
		{"ffff", "ffff", nil},        // names none: the caller says unknown
		{"abc", "abc", nil},
	}
	for _, tt := range tests {
		got, err := resolveID("session", tt.in, ids)
		if !errors.Is(err, tt.err) || got != tt.want {
			t.Errorf("resolveID(%q) = %q, %v; want %q, %v", tt.in, got, err, tt.want, tt.err)
		}
		if err != nil && (!strings.Contains(err.Error(), "0193ab-1111") || !strings.Contains(err.Error(), "0193ab-2222")) {
			t.Errorf("the refusal does not list the matches: %v", err)
		}
	}
}

// Short pending ids become the items' ids; two that name one item are
// refused (one decision per item).
func TestResolvePending(t *testing.T) {
	var items []projections.QueueItem
	for _, id := range []string{"call_deploy_1", "call_deploy_2", "call_lookup"} {
		var it projections.QueueItem
		it.ToolCallID = id
		items = append(items, it)
	}
	got, err := resolvePending(items, []string{"call_l", "call_deploy_2"})
	if err != nil || strings.Join(got, ",") != "call_lookup,call_deploy_2" {
		t.Errorf("resolvePending = %q, %v", got, err)
	}
	if _, err := resolvePending(items, []string{"call_deploy"}); !errors.Is(err, errAmbiguousID) {
		t.Errorf("an ambiguous prefix: %v", err)
	}
	if _, err := resolvePending(items, []string{"call_look", "call_lookup"}); !errors.Is(err, errUsage) {
		t.Errorf("two ids of one item: %v, want a usage error", err)
	}
}

// approve and deny take a short --session and a short pending id.
func TestDecideShortIDs(t *testing.T) {
	n, _ := testNode(t)
	sess, res := demoWaiting(t, n)
	url := "--nats=" + n.url
	out := mustCLI(t, "deny", "--session", sess.ID()[:len(sess.ID())-4], "call_dep", "--reason", "change freeze", "--by", "bob", url)
	wantContains(t, "deny", out, "deny call_deploy by bob: change freeze", "run "+res.RunID+" completed")
}
