package actors

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/weft-run/weft/toolsets"
)

func policyTool(t *testing.T, name string, bundle string) toolsets.Tool {
	t.Helper()
	var opts []toolsets.Option
	if bundle != "" {
		opts = append(opts, toolsets.WithMetadata(map[string]any{toolsets.MetaBundle: bundle}))
	}
	tl, err := toolsets.NewFunc(name, func(context.Context, struct{}) (string, error) { return name, nil }, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return tl
}

// TestApprovalPolicyDecisions: given an agent's tools, toolsets and
// policy, when it is registered and a step is prepared, then which entries
// are refused where, and which tools the policy catches and marks.
func TestApprovalPolicyDecisions(t *testing.T) {
	loose := policyTool(t, "notify", "")
	static, err := toolsets.New("files", []toolsets.Tool{policyTool(t, "read_file", "fs"), policyTool(t, "delete_file", "fs")}, toolsets.WithID("files-v1"))
	if err != nil {
		t.Fatal(err)
	}
	deploy := policyTool(t, "deploy", "")
	dyn, err := toolsets.NewDynamic("ops", toolsets.DynamicFuncs{Tools: func(context.Context, *toolsets.ToolsetContext) ([]toolsets.Tool, error) {
		return []toolsets.Tool{deploy}, nil
	}}, toolsets.WithID("ops-v1"))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name       string
		toolsets   []toolsets.Toolset
		policy     []string
		compileErr bool              // refused at registration
		stepErr    bool              // refused when the step is prepared
		caught     map[string]string // tool → entry
	}{
		{name: "no policy", toolsets: []toolsets.Toolset{static}},
		{name: "loose tool", toolsets: []toolsets.Toolset{static}, policy: []string{"notify"}, caught: map[string]string{"notify": "notify"}},
		{name: "bundle", toolsets: []toolsets.Toolset{static}, policy: []string{"fs"}, caught: map[string]string{"read_file": "fs", "delete_file": "fs"}},
		{name: "toolset id", toolsets: []toolsets.Toolset{static}, policy: []string{"files-v1"}, caught: map[string]string{"read_file": "files-v1", "delete_file": "files-v1"}},
		{name: "star", toolsets: []toolsets.Toolset{static}, policy: []string{"*"}, caught: map[string]string{"notify": "*", "read_file": "*", "delete_file": "*"}},
		{name: "typo, every toolset listed", toolsets: []toolsets.Toolset{static}, policy: []string{"delete_fiel"}, compileErr: true},
		{name: "blank entry", toolsets: []toolsets.Toolset{static}, policy: []string{""}, compileErr: true},
		{name: "typo next to a dynamic toolset", toolsets: []toolsets.Toolset{static, dyn}, policy: []string{"delete_fiel"}, stepErr: true},
		{name: "a dynamic toolset's tool", toolsets: []toolsets.Toolset{static, dyn}, policy: []string{"deploy"}, caught: map[string]string{"deploy": "deploy"}},
		{name: "a dynamic toolset's name", toolsets: []toolsets.Toolset{static, dyn}, policy: []string{"ops"}, caught: map[string]string{"deploy": "ops"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			spec := &AgentSpec{Tools: []toolsets.Tool{loose}, Toolsets: tt.toolsets, ApprovalRequired: tt.policy}
			pol, err := compilePolicy(spec)
			if tt.compileErr {
				if err == nil {
					t.Fatal("compilePolicy accepted the policy")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			spec.approval = pol
			lcs := make([]*toolsets.Lifecycle, len(tt.toolsets))
			sets := make([][]toolsets.Tool, len(tt.toolsets))
			origs := make([][]toolsets.Tool, len(tt.toolsets))
			for i, ts := range tt.toolsets {
				lcs[i] = toolsets.NewLifecycle(ts)
				p, err := toolsets.Resolve(t.Context(), ts, &toolsets.ToolsetContext{RunID: "r"})
				if err != nil {
					t.Fatal(err)
				}
				sets[i], origs[i] = p.Tools, p.Tools
			}
			looseOut, caught, err := approvalStep(spec, lcs, spec.Tools, sets)
			if tt.stepErr {
				var se *toolsets.SelectorError
				if !errors.As(err, &se) || prepareFailKind(err) != FailPolicy || se.Entries[0] != "delete_fiel" {
					t.Fatalf("step err = %v, want a policy_error naming the entry", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tt.caught == nil {
				tt.caught = map[string]string{}
			}
			if len(caught) == 0 {
				caught = map[string]string{}
			}
			if diff := cmp.Diff(tt.caught, caught); diff != "" {
				t.Errorf("caught (-want +got):\n%s", diff)
			}
			all := append(append([]toolsets.Tool(nil), looseOut...), sets[0]...)
			if len(sets) > 1 {
				all = append(all, sets[1]...)
			}
			for _, tl := range all {
				d := tl.Definition()
				_, want := tt.caught[d.Name]
				if got := toolsets.GatingOf(d).Approval; got != want {
					t.Errorf("%s: marked %v, want %v", d.Name, got, want)
				}
				if needsApproval(&Prepared{Gated: caught}, d.Name) != want {
					t.Errorf("%s: needsApproval disagrees with the mark", d.Name)
				}
			}
			// The toolsets' own slices are left alone.
			for _, orig := range origs {
				for _, tl := range orig {
					if toolsets.GatingOf(tl.Definition()).Approval {
						t.Errorf("%s: marked in the toolset's own preparation", tl.Definition().Name)
					}
				}
			}
		})
	}
}
