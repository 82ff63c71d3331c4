package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/pflag"

	"github.com/weft-run/weft/events"
)

// eventLine is a human event line: version, offset, type, details.
var eventLine = regexp.MustCompile(`^\s+(\d+)\s+\+\d+ms\s+(\S+)\s+(.*)$`)

// humanEvents returns the event types of the human output, in order, and
// checks that the versions count up from 1 without a gap.
func humanEvents(t *testing.T, out string) []string {
	t.Helper()
	var types []string
	for line := range strings.SplitSeq(out, "\n") {
		m := eventLine.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		types = append(types, m[2])
		if want := len(types); m[1] != itoa(want) {
			t.Errorf("event %d has version %s:\n%s", want, m[1], line)
		}
	}
	return types
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}

func TestDemo(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want []string // lines or fragments the output must contain
	}{
		{
			name: "approve by default",
			args: nil,
			want: []string{
				"decision: approve call_deploy by cli",
				"approval.decided     deploy        call=call_deploy approved by cli",
				"tool.started         deploy        call=call_deploy attempt=1",
				"tool.returned        deploy        call=call_deploy kind=success",
				"output: Ticket T-7 is fixed: v1.4.2 is deployed to production.",
			},
		},
		{
			name: "approve explicitly",
			args: []string{"-approve", "-by", "alice"},
			want: []string{
				"decision: approve call_deploy by alice",
				"call=call_deploy approved by alice",
				"output: Ticket T-7 is fixed: v1.4.2 is deployed to production.",
			},
		},
		{
			name: "deny",
			args: []string{"--deny", "change freeze until Monday", "--by", "bob"},
			want: []string{
				"decision: deny call_deploy by bob: change freeze until Monday",
				"call=call_deploy denied by bob: change freeze until Monday",
				"output: Ticket T-7: the fix is not deployed. The call was denied by bob: change freeze until Monday.",
			},
		},
	}
	common := []string{
		"event log: ",
		"model.response       model=func calls=[call_lookup call_fetch]",
		"tool.returned        lookup        call=call_lookup kind=success",
		"tool.returned        fetch_ticket  call=call_fetch kind=success",
		`tool.requested       deploy        call=call_deploy args={"environment":"production","release":"v1.4.2"}`,
		"tool.returned        deploy        call=call_deploy kind=approval_required",
		"run.waiting          reason=approval calls=[call_deploy]",
		"status: waiting, 1 approval(s) pending",
		"approval call_deploy: deploy ",
		"status: completed",
		"usage:  requests=3 ",
		"tool_calls=3",
		"(temporary, removed at exit; keep it with -data DIR)",
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			if err := run(t.Context(), append([]string{"demo"}, tt.args...), &stdout, &stderr); err != nil {
				t.Fatalf("demo: %v\n%s%s", err, stdout.String(), stderr.String())
			}
			out := stdout.String()
			for _, s := range append(common, tt.want...) {
				if !strings.Contains(out, s) {
					t.Errorf("output lacks %q", s)
				}
			}
			if t.Failed() {
				t.Logf("output:\n%s", out)
			}
			types := humanEvents(t, out)
			for _, typ := range []events.Type{events.TypeRunStarted, events.TypeModelRequest, events.TypeToolStarted, events.TypeApprovalRequested, events.TypeRunWaiting, events.TypeApprovalDecided, events.TypeRunResumed, events.TypeRunCompleted} {
				if !strings.Contains(strings.Join(types, " "), string(typ)) {
					t.Errorf("no %s event in %v", typ, types)
				}
			}
			// The notes come between the two legs: the pending approval
			// after run.waiting, the resume before approval.decided.
			waitAt, pendingAt, decidedAt := strings.Index(out, "run.waiting"), strings.Index(out, "status: waiting"), strings.Index(out, "approval.decided")
			if !(waitAt < pendingAt && pendingAt < decidedAt) {
				t.Errorf("run.waiting at %d, the pending note at %d, approval.decided at %d: out of order", waitAt, pendingAt, decidedAt)
			}
			if last := types[len(types)-1]; last != string(events.TypeRunCompleted) {
				t.Errorf("last event %s, want run.completed", last)
			}
			// The temporary data directory is gone.
			m := regexp.MustCompile(`data directory: (\S+) \(temporary`).FindStringSubmatch(out)
			if m == nil {
				t.Fatal("output does not name the data directory")
			}
			if _, err := os.Stat(m[1]); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("data directory %s still there: %v", m[1], err)
			}
		})
	}
}

func TestDemoJSON(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if err := run(t.Context(), []string{"demo", "-json", "-deny", "not now"}, &stdout, &stderr); err != nil {
		t.Fatalf("demo: %v\n%s", err, stderr.String())
	}
	var evs []events.Event
	sc := bufio.NewScanner(&stdout)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		ev, err := events.ParseEvent(sc.Bytes())
		if err != nil {
			t.Fatalf("stdout line %q is not an event: %v", sc.Text(), err)
		}
		evs = append(evs, ev)
	}
	if len(evs) == 0 {
		t.Fatal("no events on stdout")
	}
	count := map[events.Type]int{}
	for i, ev := range evs {
		count[ev.Type]++
		if ev.Version != uint64(i+1) || ev.Position == 0 || ev.Stream != evs[0].Stream {
			t.Errorf("event %d: version %d, position %d, stream %s", i, ev.Version, ev.Position, ev.Stream)
		}
	}
	want := map[events.Type]int{
		events.TypeRunStarted:        1,
		events.TypeToolRequested:     3,
		events.TypeToolStarted:       2, // the denied deploy never starts
		events.TypeToolReturned:      4, // lookup, fetch_ticket, deploy's approval_required, its denial
		events.TypeApprovalRequested: 1,
		events.TypeRunWaiting:        1,
		events.TypeApprovalDecided:   1,
		events.TypeRunResumed:        1,
		events.TypeRunCompleted:      1,
	}
	got := map[events.Type]int{}
	for typ := range want {
		got[typ] = count[typ]
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("event counts (-want +got):\n%s", d)
	}
	decided, err := events.DecodeAs[events.ApprovalDecided](find(t, evs, events.TypeApprovalDecided))
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(events.ApprovalDecided{Approved: false, By: "cli", Reason: "not now"}, decided); d != "" {
		t.Errorf("decision (-want +got):\n%s", d)
	}
	notes := stderr.String()
	for _, s := range []string{"status: waiting", "decision: deny call_deploy by cli: not now", "status: completed"} {
		if !strings.Contains(notes, s) {
			t.Errorf("stderr lacks %q:\n%s", s, notes)
		}
	}
}

func find(t *testing.T, evs []events.Event, typ events.Type) events.Event {
	t.Helper()
	for _, ev := range evs {
		if ev.Type == typ {
			return ev
		}
	}
	t.Fatalf("no %s event", typ)
	return events.Event{}
}

// A kept data directory survives the demo, and a second demo on it (a
// restart on the same log) works.
func TestDemoKeepsDataDir(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	for i := range 2 {
		var stdout, stderr bytes.Buffer
		if err := run(t.Context(), []string{"demo", "-data", dir}, &stdout, &stderr); err != nil {
			t.Fatalf("demo %d: %v\n%s", i, err, stderr.String())
		}
		if !strings.Contains(stdout.String(), "data directory: "+dir+" (kept; the event log is in "+filepath.Join(dir, "nats")+")") {
			t.Errorf("demo %d does not say where the kept log is:\n%s", i, stdout.String())
		}
		// Only this run's session is printed, from version 1.
		if types := humanEvents(t, stdout.String()); len(types) == 0 || types[0] != string(events.TypeRunStarted) {
			t.Errorf("demo %d printed %v", i, types)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "nats")); err != nil {
		t.Errorf("the event log is gone: %v", err)
	}
}

func TestDemoFlagErrors(t *testing.T) {
	tests := []struct {
		name string
		args []string
	}{
		{"unknown flag", []string{"-yes"}},
		{"deny without a reason", []string{"-deny"}},
		{"deny with an empty reason", []string{"-deny", ""}},
		{"approve and deny", []string{"-approve", "-deny", "no"}},
		{"approve=false alone", []string{"-approve=false"}},
		{"an argument", []string{"now"}},
		{"empty decider", []string{"-by", ""}},
		{"zero timeout", []string{"-timeout", "0s"}},
		{"bad timeout", []string{"-timeout", "soon"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			err := run(t.Context(), append([]string{"demo"}, tt.args...), &stdout, &stderr)
			if !errors.Is(err, errUsage) {
				t.Errorf("err = %v, want a usage error", err)
			}
			if !strings.Contains(stderr.String(), "usage: weft demo") {
				t.Errorf("stderr lacks the usage message:\n%s", stderr.String())
			}
			if stdout.Len() != 0 {
				t.Errorf("the demo ran:\n%s", stdout.String())
			}
		})
	}
}

func TestDemoHelp(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if err := run(t.Context(), []string{"demo", "-h"}, &stdout, &stderr); !errors.Is(err, pflag.ErrHelp) {
		t.Errorf("err = %v, want pflag.ErrHelp", err)
	}
	for _, s := range []string{"usage: weft demo", "-deny reason", "-data DIR", "-json"} {
		if !strings.Contains(stdout.String(), s) {
			t.Errorf("help lacks %q:\n%s", s, stdout.String())
		}
	}
}
