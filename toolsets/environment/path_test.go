package environment_test

import (
	"errors"
	"testing"
	"time"

	"github.com/weft-run/weft/toolsets/environment"
)

func TestClean(t *testing.T) {
	tests := []struct {
		root, name string
		want       string
		err        error
	}{
		{"/srv/r", "", ".", nil},
		{"/srv/r", ".", ".", nil},
		{"/srv/r", "a/b", "a/b", nil},
		{"/srv/r", "a/../b", "b", nil},
		{"/srv/r", "./a//b/", "a/b", nil},
		{"/srv/r", "/srv/r/a", "a", nil},
		{"/srv/r", "/srv/r", ".", nil},
		{"/srv/r", "..", "", environment.ErrOutsideRoot},
		{"/srv/r", "../r/a", "", environment.ErrOutsideRoot},
		{"/srv/r", "a/../../x", "", environment.ErrOutsideRoot},
		{"/srv/r", "/srv/other", "", environment.ErrOutsideRoot},
		{"/srv/r", "/srv/r2/a", "", environment.ErrOutsideRoot},
		{"/srv/r", "/etc/passwd", "", environment.ErrOutsideRoot},
		{"/srv/r", "a\x00", "", environment.ErrInvalidPath},
		{"/", "/etc/passwd", "etc/passwd", nil},
	}
	for _, tt := range tests {
		got, err := environment.Clean(tt.root, tt.name)
		if got != tt.want || !errors.Is(err, tt.err) {
			t.Errorf("Clean(%q, %q) = %q, %v; want %q, %v", tt.root, tt.name, got, err, tt.want, tt.err)
		}
	}
}

func TestShellPolicyTimeout(t *testing.T) {
	tests := []struct {
		name      string
		policy    environment.ShellPolicy
		requested time.Duration
		want      time.Duration
	}{
		{"default", environment.ShellPolicy{}, 0, environment.DefaultTimeout},
		{"requested", environment.ShellPolicy{}, time.Minute, time.Minute},
		{"capped", environment.ShellPolicy{}, time.Hour, environment.DefaultMaxTimeout},
		{"policy default", environment.ShellPolicy{Timeout: 5 * time.Second}, 0, 5 * time.Second},
		{"policy cap", environment.ShellPolicy{MaxTimeout: 30 * time.Second}, time.Minute, 30 * time.Second},
		{"default above the default cap", environment.ShellPolicy{Timeout: time.Hour}, 0, time.Hour},
	}
	for _, tt := range tests {
		if got := tt.policy.TimeoutFor(tt.requested); got != tt.want {
			t.Errorf("%s: TimeoutFor(%s) = %s, want %s", tt.name, tt.requested, got, tt.want)
		}
	}
}

func TestCapture(t *testing.T) {
	c := environment.NewCapture(5)
	for _, s := range []string{"abc", "def", "ghi"} {
		if n, err := c.Write([]byte(s)); n != 3 || err != nil {
			t.Fatalf("Write = %d, %v", n, err)
		}
	}
	if b, dropped := c.Result(); string(b) != "abcde" || dropped != 4 {
		t.Errorf("Result = %q, %d", b, dropped)
	}
}

func TestRefusal(t *testing.T) {
	err := &environment.PathError{Op: "read", Path: "x", Err: environment.ErrTooLarge}
	if code, ok := environment.Refusal(err); !ok || code != "too_large" {
		t.Errorf("Refusal = %q, %v", code, ok)
	}
	if _, ok := environment.Refusal(errors.New("disk on fire")); ok {
		t.Error("an I/O error is a refusal")
	}
}
