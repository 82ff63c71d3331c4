package toolsets_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/weft-run/weft/toolsets"
)

func TestKindFlags(t *testing.T) {
	type F = toolsets.Flags
	tests := []struct {
		kind toolsets.Kind
		want F
	}{
		{toolsets.KindSuccess, F{Success: true}},
		{toolsets.KindNotFound, F{IsError: true, ModelRetryable: true, HowToFix: true}},
		{toolsets.KindNotExposed, F{IsError: true, ModelRetryable: true, HowToFix: true}},
		{toolsets.KindInvalidArguments, F{IsError: true, ModelRetryable: true, HowToFix: true}},
		{toolsets.KindModelRetry, F{IsError: true, ModelRetryable: true, HowToFix: true}},
		{toolsets.KindFeedback, F{}},
		{toolsets.KindUserError, F{IsError: true}},
		{toolsets.KindExecution, F{IsError: true, InternallyRetryable: true}},
		{toolsets.KindApprovalRequired, F{Suspends: true}},
		{toolsets.KindCallDeferred, F{Suspends: true}},
		{toolsets.KindElicitationRequired, F{Suspends: true}},
		{toolsets.KindCancelled, F{IsError: true}},
		{toolsets.KindTimeout, F{IsError: true}},
	}
	if len(tests) != len(toolsets.Kinds()) {
		t.Fatalf("table has %d rows, there are %d kinds", len(tests), len(toolsets.Kinds()))
	}
	for _, tt := range tests {
		t.Run(string(tt.kind), func(t *testing.T) {
			if !tt.kind.Valid() {
				t.Fatalf("%q not valid", tt.kind)
			}
			if diff := cmp.Diff(tt.want, tt.kind.Flags()); diff != "" {
				t.Errorf("flags (-want +got):\n%s", diff)
			}
		})
	}
}

func TestKindText(t *testing.T) {
	for _, k := range toolsets.Kinds() {
		b, err := json.Marshal(k)
		if err != nil {
			t.Fatalf("marshal %q: %v", k, err)
		}
		var got toolsets.Kind
		if err := json.Unmarshal(b, &got); err != nil || got != k {
			t.Errorf("round trip %q = %q, %v", k, got, err)
		}
	}
	var k toolsets.Kind
	if err := json.Unmarshal([]byte(`"exploded"`), &k); err == nil {
		t.Error("unknown kind decoded without error")
	}
	if _, err := json.Marshal(toolsets.Kind("exploded")); err == nil {
		t.Error("unknown kind encoded without error")
	}
}

// UserError is an unrelated error type that merely shares a name with the
// weft type; it must not be mistaken for one.
type UserError struct{ msg string }

func (e UserError) Error() string { return e.msg }

type ModelRetryError struct{}

func (*ModelRetryError) Error() string { return "not weft's" }

func TestKindOf(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want toolsets.Kind
	}{
		{"nil", nil, toolsets.KindSuccess},
		{"invalid arguments", toolsets.InvalidArguments("x", "bad", "fix"), toolsets.KindInvalidArguments},
		{"model retry", toolsets.ModelRetry("again"), toolsets.KindModelRetry},
		{"feedback", toolsets.Feedback("missing file"), toolsets.KindFeedback},
		{"user error", toolsets.NewUserError("no db", nil), toolsets.KindUserError},
		{"approval", toolsets.ApprovalRequired("deploy", nil), toolsets.KindApprovalRequired},
		{"deferred", toolsets.CallDeferred("worker", nil), toolsets.KindCallDeferred},
		{"cancelled", &toolsets.CancelledError{}, toolsets.KindCancelled},
		{"timeout", &toolsets.TimeoutError{After: time.Second}, toolsets.KindTimeout},
		{"wrapped model retry", fmt.Errorf("step: %w", toolsets.ModelRetry("x")), toolsets.KindModelRetry},
		{"joined feedback", errors.Join(errors.New("a"), toolsets.Feedback("b")), toolsets.KindFeedback},
		{"plain error", errors.New("boom"), toolsets.KindExecution},
		{"foreign UserError", UserError{"looks like one"}, toolsets.KindExecution},
		{"foreign ModelRetryError", &ModelRetryError{}, toolsets.KindExecution},
		{"user error wrapping a model retry", toolsets.NewUserError("x", toolsets.ModelRetry("y")), toolsets.KindModelRetry},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := toolsets.KindOf(tt.err); got != tt.want {
				t.Errorf("KindOf(%v) = %s, want %s", tt.err, got, tt.want)
			}
		})
	}
}
