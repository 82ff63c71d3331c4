package weft_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/weft-run/weft"
)

func TestRemoteToolsNotServed(t *testing.T) {
	rt := newRuntime(t)
	for _, tc := range []struct {
		name  string
		names []string
		want  string
	}{
		{"no names", nil, "no tool names"},
		{"nobody serves it", []string{"ghost"}, "ghost"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
			defer cancel()
			_, err := rt.RemoteTools(ctx, tc.names...)
			if !errors.Is(err, weft.ErrRemoteToolNotFound) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want ErrRemoteToolNotFound about %q", err, tc.want)
			}
		})
	}
}
