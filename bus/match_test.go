package bus_test

import (
	"testing"

	"github.com/weft-run/weft/bus"
)

func TestSubjectMatches(t *testing.T) {
	tests := []struct {
		filter, subject string
		want            bool
	}{
		{"weft.evt.session.a.run.started", "weft.evt.session.a.run.started", true},
		{"weft.evt.session.a.run.started", "weft.evt.session.a.run.completed", false},
		{"weft.evt.session.*.run.started", "weft.evt.session.a.run.started", true},
		{"weft.evt.*", "weft.evt.session.a", false},
		{"weft.evt.*.*", "weft.evt.session", false},
		{"weft.evt.>", "weft.evt.session.a.run.started", true},
		{"weft.evt.>", "weft.evt.session", true},
		{"weft.evt.>", "weft.evt", false},
		{"weft.evt.session.>", "weft.evt", false},
		{">", "weft", true},
		{"*", "weft", true},
		{"*", "weft.evt", false},
		{"weft.evt", "weft", false},
		{"weft", "weft.evt", false},
		{"weft.*.session", "weft.log.session", true},
		{"weft.*.session", "weft.log.other", false},
	}
	for _, tt := range tests {
		if got := bus.SubjectMatches(tt.filter, tt.subject); got != tt.want {
			t.Errorf("SubjectMatches(%q, %q) = %v, want %v", tt.filter, tt.subject, got, tt.want)
		}
	}
	if n := testing.AllocsPerRun(100, func() { bus.SubjectMatches("weft.evt.*.>", "weft.evt.session.a.run.started") }); n != 0 {
		t.Errorf("%v allocations, want 0", n)
	}
}
