package main

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

func TestUsageErrors(t *testing.T) {
	tests := []struct {
		name string
		args []string
	}{
		{"no command", nil},
		{"unknown command", []string{"launch"}},
		{"tools with arguments", []string{"tools", "extra"}},
		{"unknown global flag", []string{"-verbose", "demo"}},
		{"unknown tools flag", []string{"tools", "-verbose"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			if err := run(t.Context(), tt.args, &stdout, &stderr); !errors.Is(err, errUsage) {
				t.Errorf("err = %v, want a usage error", err)
			}
			if !strings.Contains(stderr.String(), "usage: weft") {
				t.Errorf("stderr lacks the usage message:\n%s", stderr.String())
			}
		})
	}
}
