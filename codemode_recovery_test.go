package weft_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/weft-run/weft"
	"github.com/weft-run/weft/bus"
	"github.com/weft-run/weft/codemode"
	"github.com/weft-run/weft/events"
	"github.com/weft-run/weft/llm"
	"github.com/weft-run/weft/toolsets"
)

// childModes are child parts of the recovery tests defined outside
// recovery_test.go, by WEFT_CHILD mode.
var childModes = map[string]func(mode string) error{
	"code-start":  codeChild,
	"code-resume": codeChild,
}

// codeProgram books a room (a side effect, written to the mark file) and
// then moves a meeting, which waits for approval: the process is killed
// while the program is stopped there.
const codeProgram = `slot = find_empty_slot(calendar, after="2026-03-02T08:00")
booking = book_room(room="blue", slot=slot)
updated = move_meeting(calendar.find_meeting("Weekly planning", day=today), slot)
print("booked", booking, "moved to", updated.starts_at)`

func codeChild(mode string) error {
	ctx := context.Background()
	rt, err := weft.Start(ctx, weft.Config{DataDir: os.Getenv(envDir), Sync: bus.SyncAlways})
	if err != nil {
		return err
	}
	defer rt.Close()
	cal := newCalendar()
	tools := calendarTools(cal)
	book, err := toolsets.NewContextFunc("book_room", func(_ context.Context, tc *toolsets.ToolContext, a struct {
		Room string `json:"room"`
		Slot Slot   `json:"slot"`
	}) (string, error) {
		f, err := os.OpenFile(os.Getenv(envMark), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err != nil {
			return "", err
		}
		defer f.Close()
		fmt.Fprintf(f, "BOOKED %s %s %s\n", tc.CallID, a.Room, a.Slot.StartsAt.Format("15:04"))
		return "booking-1", nil
	})
	if err != nil {
		return err
	}
	tools = append(tools, book)
	env := &codemode.Env{Objects: map[string]any{"calendar": cal}, Values: map[string]any{"today": "2026-03-02"}, Tools: tools}
	model := llm.Func(func(_ context.Context, req *llm.Request) (*llm.Response, error) {
		if len(req.Messages[len(req.Messages)-1].ToolReturns()) > 0 {
			return &llm.Response{Text: "rescheduled"}, nil
		}
		return &llm.Response{ToolCalls: []llm.ToolCall{codeCall("c1", codeProgram)}}, nil
	})
	a, err := rt.NewAgent("scheduler", weft.AgentConfig{Model: model, Tools: append(tools, codemode.NewTool(env)), ApprovalRequiredTools: []string{"move_meeting"}})
	if err != nil {
		return err
	}
	if _, err := rt.Recover(ctx); err != nil {
		return err
	}
	sess := a.Session(os.Getenv(envSession))
	if mode == "code-start" {
		res, err := sess.Run(ctx, "move the planning after a room is booked", weft.CodeMode())
		if err != nil {
			return err
		}
		fmt.Println("WAITING", res.Status, res.Pending.Approvals[0].ID)
		select {} // wait to be killed
	}
	res, err := sess.Resume(ctx, weft.Approve("c1.3", "ana", nil))
	if err != nil {
		return err
	}
	fmt.Println("RESULT", res.Status, res.Output)
	return nil
}

// TestKilledMidProgramResumes kills a real process while a program is
// stopped at its third call (waiting for approval), starts a new process
// on the same data directory, approves, and checks that the program
// finished from its journal: the booking (a side effect) happened once,
// and the variables are the program's.
func TestKilledMidProgramResumes(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	dir, session := t.TempDir(), "code-recovery"
	mark := filepath.Join(t.TempDir(), "mark")
	cmd, out := startChild(t, "code-start", dir, session, mark)
	if line := readLine(t, out, "WAITING"); line != "WAITING waiting c1.3" {
		t.Fatalf("child: %s", line)
	}
	kill(t, cmd)

	cmd, out = startChild(t, "code-resume", dir, session, mark)
	if line := readLine(t, out, "RESULT"); line != "RESULT completed rescheduled" {
		t.Fatalf("child: %s", line)
	}
	_ = cmd.Wait()

	b, err := os.ReadFile(mark)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(string(b)); got != "BOOKED c1.2 blue 08:00" {
		t.Fatalf("side effects:\n%s\nwant one booking by c1.2", got)
	}
	evs := checkLog(t, dir, session)
	var state toolsets.CodeState
	var returned []string
	for _, ev := range evs {
		if ev.Type != events.TypeToolReturned {
			continue
		}
		ret := returnOf(t, ev)
		returned = append(returned, ev.ToolCallID+":"+string(ret.Kind))
		if ev.ToolCallID == "c1" {
			s, ok := toolsets.CodeStateOf(&ret)
			if !ok {
				t.Fatalf("the program's return has no state: %+v", ret)
			}
			state = s
		}
	}
	if want := "c1.1:success,c1.2:success,c1.3:approval_required,c1.3:success,c1:success"; strings.Join(returned, ",") != want {
		t.Fatalf("returns %v, want %s", returned, want)
	}
	var names []string
	for k := range state.Values {
		names = append(names, k)
	}
	slices.Sort(names)
	if strings.Join(names, ",") != "booking,slot,updated" || string(state.Values["booking"]) != `"booking-1"` {
		t.Fatalf("variables = %v", state.Values)
	}
	var updated Meeting
	if err := json.Unmarshal(state.Values["updated"], &updated); err != nil || updated.StartsAt.Format("15:04") != "08:00" {
		t.Fatalf("updated = %s (%v)", state.Values["updated"], err)
	}
}
