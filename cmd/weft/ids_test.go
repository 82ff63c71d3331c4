package main

import (
	"errors"
	"strings"
	"testing"
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
