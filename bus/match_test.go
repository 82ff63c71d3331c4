package bus_test

import (
	"errors"
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

func TestCheckEventFilter(t *testing.T) {
	sub, err := bus.NewSubjects("t1.weft")
	if err != nil {
		t.Fatal(err)
	}
	for _, ok := range []string{">", "t1.>", "*.*.>", "t1.weft.evt.>", "t1.weft.evt.session.*.tool.returned", "t1.weft.evt.session.a.>", "t1.weft.evt.*.*.*"} {
		if err := sub.CheckEventFilter(ok); err != nil {
			t.Errorf("CheckEventFilter(%q): %v", ok, err)
		}
	}
	for _, bad := range []string{"", "t1.weft.evt. x.>", "t1..>", "t1.>.evt", "t1.weft.evt.session.a*.>", "weft.evt.>", "t1.weft.cmd.>", "t1.weft.evt", "t1.weft.evt.session.a"} {
		err := sub.CheckEventFilter(bad)
		if !errors.Is(err, bus.ErrBadEventFilter) {
			t.Errorf("CheckEventFilter(%q) = %v, want ErrBadEventFilter", bad, err)
		}
		if fe, ok := errors.AsType[*bus.FilterError](err); !ok || fe.Filter != bad || fe.Reason == "" {
			t.Errorf("CheckEventFilter(%q) = %#v, want a *FilterError naming it", bad, err)
		}
	}
}
