package filesystem_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/weft-run/weft/toolsets"
	"github.com/weft-run/weft/toolsets/environment"
	"github.com/weft-run/weft/toolsets/filesystem"
)

func TestEdit(t *testing.T) {
	tests := []struct {
		name   string
		args   string
		kind   toolsets.Kind
		reason string // of the feedback
		want   string // dup.txt afterwards
		n      int    // replacements
	}{
		{name: "unique", args: `{"path":"dup.txt","old_string":"a\n","new_string":"A\n"}`, kind: toolsets.KindSuccess, want: "A\nsame\nb\nsame\n", n: 1},
		{name: "missing", args: `{"path":"dup.txt","old_string":"zzz","new_string":"y"}`, kind: toolsets.KindFeedback, reason: filesystem.ReasonNoMatch, want: files["dup.txt"]},
		{name: "ambiguous", args: `{"path":"dup.txt","old_string":"same","new_string":"x"}`, kind: toolsets.KindFeedback, reason: filesystem.ReasonAmbiguous, want: files["dup.txt"]},
		{name: "replace all", args: `{"path":"dup.txt","old_string":"same","new_string":"x","replace_all":true}`, kind: toolsets.KindSuccess, want: "a\nx\nb\nx\n", n: 2},
		{name: "whitespace matters", args: `{"path":"dup.txt","old_string":" same","new_string":"x"}`, kind: toolsets.KindFeedback, reason: filesystem.ReasonNoMatch, want: files["dup.txt"]},
		{name: "empty old", args: `{"path":"dup.txt","old_string":"","new_string":"x"}`, kind: toolsets.KindInvalidArguments, want: files["dup.txt"]},
		{name: "no change", args: `{"path":"dup.txt","old_string":"a","new_string":"a"}`, kind: toolsets.KindInvalidArguments, want: files["dup.txt"]},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := newVirtual(t)
			h := bound(t, v)
			ret := h.call(filesystem.EditTool, tt.args, true)
			if ret.Kind != tt.kind {
				t.Fatalf("edit = %s %s, want %s", ret.Kind, ret.Content, tt.kind)
			}
			if ret.IsError && tt.kind == toolsets.KindFeedback {
				t.Error("guidance is flagged as an error")
			}
			if tt.reason != "" && ret.Metadata["reason"] != tt.reason {
				t.Errorf("reason = %v, want %s (%s)", ret.Metadata["reason"], tt.reason, ret.Content)
			}
			if got := v.Files()["dup.txt"]; got != tt.want {
				t.Errorf("dup.txt = %q, want %q", got, tt.want)
			}
			e, ok := effectOf(t, ret)
			if tt.kind != toolsets.KindSuccess {
				if ok {
					t.Errorf("an edit that changed nothing recorded %+v", e)
				}
				return
			}
			want := environment.Effect{Kind: environment.EffectEdit, SessionID: "s1", RunID: "r1", CallID: ret.CallID, Tool: filesystem.EditTool,
				Path: "dup.txt", Bytes: int64(len(tt.want)), SHA256: environment.SHA256([]byte(tt.want)), Replacements: tt.n,
				PreviousBytes: int64(len(files["dup.txt"])), PreviousSHA256: environment.SHA256([]byte(files["dup.txt"]))}
			if d := cmp.Diff(want, e); d != "" {
				t.Errorf("effect (-want +got):\n%s", d)
			}
		})
	}
}
