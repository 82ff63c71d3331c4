package console

import (
	"context"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/weft-run/weft/projections"
)

// A run that waits for several items resumes once, with every decision
// (the API refuses a resume that leaves one out: missing_decisions). The
// console keeps a principal's decisions of such a run here until the
// last one comes, then sends them all in one POST .../decisions.

// stageKey is one principal's decisions of one waiting run.
type stageKey struct{ principal, session, run string }

// staged holds the decisions not sent yet (the process's memory: a
// restart forgets them, and the person decides again).
type staged struct {
	mu sync.Mutex
	m  map[stageKey]map[string]map[string]any // call id → the API's decision
}

// stage records call's decision (body plus id and action) and returns
// the run's decisions when every item of pending has one, or the ids
// still undecided. The decisions stay staged until drop: a batch the API
// refuses is kept, to be sent again once the refused one is decided anew.
func (s *staged) stage(k stageKey, call, action string, body map[string]any, pending []string) (all []map[string]any, missing []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m == nil {
		s.m = map[stageKey]map[string]map[string]any{}
	}
	d := s.m[k]
	if d == nil {
		d = map[string]map[string]any{}
		s.m[k] = d
	}
	one := map[string]any{"id": call, "action": action}
	for f, v := range body {
		one[f] = v
	}
	d[call] = one
	for id := range d {
		if !slices.Contains(pending, id) {
			delete(d, id) // decided meanwhile, elsewhere
		}
	}
	for _, id := range pending {
		if d[id] == nil {
			missing = append(missing, id)
		}
	}
	if len(missing) > 0 {
		return nil, missing
	}
	for _, id := range pending {
		all = append(all, d[id])
	}
	return all, nil
}

// drop forgets k's decisions (sent, or decided elsewhere).
func (s *staged) drop(k stageKey) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.m, k)
}

// siblings returns the ids of the pending items of call's run in session
// (call's among them) and the run's id; one id: the run waits for call
// alone.
func (c *Console) siblings(ctx context.Context, token, session, call string) ([]string, string, error) {
	var out struct {
		Pending []projections.QueueItem `json:"pending"`
	}
	if err := c.call(ctx, token, "GET", "/v1/pending", url.Values{"session": {session}}, nil, &out); err != nil {
		return nil, "", err
	}
	run := ""
	for _, it := range out.Pending {
		if it.ToolCallID == call {
			run = it.RunID
		}
	}
	var ids []string
	for _, it := range out.Pending {
		if it.RunID == run && run != "" {
			ids = append(ids, it.ToolCallID)
		}
	}
	return ids, run, nil
}

// refusedMessage names the call of ids that the API's refusal msg is
// about (the runtime quotes the id), or all of them when msg names none.
func refusedMessage(msg string, ids []string) string {
	for _, id := range ids {
		if strings.Contains(msg, strconv.Quote(id)) {
			return fmt.Sprintf("the decision of %s was refused (the run's other decisions are kept): %s", id, msg)
		}
	}
	return fmt.Sprintf("the decisions of %s were refused (kept): %s", strings.Join(ids, ", "), msg)
}

func stagedMessage(missing []string) string {
	return fmt.Sprintf("kept: the run resumes once its other items are decided too (%s)", strings.Join(missing, ", "))
}
