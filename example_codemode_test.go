package weft_test

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/weft-run/weft"
	"github.com/weft-run/weft/codemode"
	"github.com/weft-run/weft/events/memstore"
	"github.com/weft-run/weft/llm"
	"github.com/weft-run/weft/toolsets"
)

// Meeting is a calendar entry; a program reads its fields as attributes.
type Meeting struct {
	Title    string    `json:"title"`
	StartsAt time.Time `json:"starts_at"`
	EndsAt   time.Time `json:"ends_at"`
}

// Slot is a free time range.
type Slot struct {
	StartsAt time.Time `json:"starts_at"`
	EndsAt   time.Time `json:"ends_at"`
}

// Calendar is a live application object: programs call its read methods
// directly (codemode.Object); changes go through tools.
type Calendar struct {
	mu       sync.Mutex
	meetings []Meeting
	moves    int
}

func (c *Calendar) Attr(name string) (any, bool) {
	switch name {
	case "events_for":
		return codemode.Method(func(args []any, _ map[string]any) (any, error) {
			day, _ := args[0].(string)
			return c.eventsFor(day), nil
		}), true
	case "find_meeting":
		return codemode.Method(func(args []any, kw map[string]any) (any, error) {
			title, _ := args[0].(string)
			day, _ := kw["day"].(string)
			for _, m := range c.eventsFor(day) {
				if m.Title == title {
					return m, nil
				}
			}
			return nil, fmt.Errorf("no meeting %q on %s", title, day)
		}), true
	}
	return nil, false
}

func (c *Calendar) AttrNames() []string { return []string{"events_for", "find_meeting"} }
func (c *Calendar) Repr() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return fmt.Sprintf("<calendar with %d meetings>", len(c.meetings))
}

func (c *Calendar) eventsFor(day string) []Meeting {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []Meeting
	for _, m := range c.meetings {
		if m.StartsAt.Format(time.DateOnly) == day {
			out = append(out, m)
		}
	}
	return out
}

// emptySlot returns the first free half hour from after on.
func (c *Calendar) emptySlot(after time.Time, minutes int) Slot {
	c.mu.Lock()
	defer c.mu.Unlock()
	start := after
	for _, m := range c.meetings {
		if m.StartsAt.Before(start.Add(time.Duration(minutes)*time.Minute)) && m.EndsAt.After(start) {
			start = m.EndsAt
		}
	}
	return Slot{StartsAt: start, EndsAt: start.Add(time.Duration(minutes) * time.Minute)}
}

func (c *Calendar) move(title string, to Slot) Meeting {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.moves++
	for i, m := range c.meetings {
		if m.Title == title {
			c.meetings[i].StartsAt, c.meetings[i].EndsAt = to.StartsAt, to.EndsAt
			return c.meetings[i]
		}
	}
	return Meeting{}
}

type findSlotArgs struct {
	Calendar        *Calendar `json:"calendar" jsonschema:"Calendar object to search."`
	After           time.Time `json:"after" jsonschema:"Earliest acceptable start time."`
	DurationMinutes int       `json:"duration_minutes,omitempty" jsonschema:"Required meeting length (default 30)."`
}

type moveArgs struct {
	Meeting Meeting `json:"meeting" jsonschema:"Meeting to move."`
	NewSlot Slot    `json:"new_slot" jsonschema:"Approved destination slot."`
}

// calendarTools are the seed's tools over cal.
func calendarTools(cal *Calendar) []toolsets.Tool {
	find, err := toolsets.NewFunc("find_empty_slot", func(_ context.Context, a findSlotArgs) (Slot, error) {
		if a.DurationMinutes == 0 {
			a.DurationMinutes = 30
		}
		return a.Calendar.emptySlot(a.After, a.DurationMinutes), nil
	}, toolsets.WithDescription("Find an available calendar slot after a given time."))
	if err != nil {
		panic(err)
	}
	move, err := toolsets.NewFunc("move_meeting", func(_ context.Context, a moveArgs) (Meeting, error) {
		return cal.move(a.Meeting.Title, a.NewSlot), nil
	}, toolsets.WithDescription("Move a meeting after application-level permission checks. Returns the updated meeting."))
	if err != nil {
		panic(err)
	}
	return []toolsets.Tool{find, move}
}

func newCalendar() *Calendar {
	day := time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)
	return &Calendar{meetings: []Meeting{
		{Title: "Standup", StartsAt: day.Add(9 * time.Hour), EndsAt: day.Add(9*time.Hour + 15*time.Minute)},
		{Title: "Weekly planning", StartsAt: day.Add(10 * time.Hour), EndsAt: day.Add(11 * time.Hour)},
		{Title: "Review", StartsAt: day.Add(11 * time.Hour), EndsAt: day.Add(12 * time.Hour)},
	}}
}

const calendarProgram = `events = calendar.events_for(today)
meeting = calendar.find_meeting("Weekly planning", day=today)
later_slot = find_empty_slot(calendar, after=meeting.ends_at)
updated = move_meeting(meeting, later_slot)
print(len(events), "meetings today; moved to", updated.starts_at)`

// The seed's calendar job in code mode: the model writes one program; the
// program reads the live calendar object directly, calls find_empty_slot
// (which receives the calendar itself, bound by name) and move_meeting,
// which needs approval. The run waits with the program stopped at that
// call (id c1.2); once approved, the program runs again from the start
// with its journal and finishes, and its variables are kept.
func Example_calendar() {
	ctx := context.Background()
	rt, err := weft.Start(ctx, weft.Config{Store: memstore.New()})
	if err != nil {
		panic(err)
	}
	defer rt.Close()

	cal := newCalendar()
	tools := calendarTools(cal)
	env := &codemode.Env{
		Objects: map[string]any{"calendar": cal},
		Values:  map[string]any{"today": "2026-03-02"},
		Tools:   tools,
	}
	model := llm.NewScripted(
		llm.ScriptToolCalls(llm.ToolCall{ID: "c1", Name: codemode.ToolName, Arguments: []byte(fmt.Sprintf(`{"code":%q}`, calendarProgram))}),
		llm.ScriptText("Moved weekly planning to 12:00."),
	)
	agent, err := rt.NewAgent("calendar_assistant", weft.AgentConfig{
		Model:                 model,
		Instructions:          []string{"You help users manage their calendar by writing code.\nAvailable variables: {shared_var_names}\nAvailable tools:\n{brief_tools}"},
		Tools:                 append(tools, codemode.NewTool(env)),
		ApprovalRequiredTools: []string{"move_meeting"},
	})
	if err != nil {
		panic(err)
	}
	sess := agent.NewSession()
	res, err := sess.Run(ctx, "Move my weekly planning to a later free slot.", weft.CodeMode())
	if err != nil {
		panic(err)
	}
	fmt.Println(res.Status, res.Pending.Approvals[0].ID, res.Pending.Approvals[0].Tool)

	res, err = sess.Resume(ctx, weft.Approve("c1.2", "ana", nil))
	if err != nil {
		panic(err)
	}
	fmt.Println(res.Status, res.Output)
	fmt.Println(cal.moves, "move")
	for _, p := range model.Requests()[1].Messages[len(model.Requests()[1].Messages)-1].ToolReturns() {
		fmt.Println(p.Name, "returned", string(p.Content))
	}
	// Output:
	// waiting c1.2 move_meeting
	// completed Moved weekly planning to 12:00.
	// 1 move
	// run_code returned "3 meetings today; moved to 2026-03-02T12:00:00Z"
}
