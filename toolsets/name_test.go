package toolsets_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/weft-run/weft/toolsets"
)

func TestValidateName(t *testing.T) {
	tests := []struct {
		name, in string
		ok       bool
	}{
		{"simple", "add", true},
		{"all classes", "fetch_Ticket-2", true},
		{"max length", strings.Repeat("a", 64), true},
		{"empty", "", false},
		{"too long", strings.Repeat("a", 65), false},
		{"space", "fetch ticket", false},
		{"dot", "ns.tool", false},
		{"unicode", "café", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := toolsets.ValidateName(tt.in)
			if (err == nil) != tt.ok {
				t.Fatalf("ValidateName(%q) = %v, want ok=%v", tt.in, err, tt.ok)
			}
			if err != nil {
				var ne *toolsets.NameError
				if !errors.As(err, &ne) || !errors.Is(err, toolsets.ErrInvalidName) {
					t.Errorf("error %v is not a *NameError matching ErrInvalidName", err)
				}
			}
		})
	}
}
