package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/weft-run/weft"
	"github.com/weft-run/weft/events"
	"github.com/weft-run/weft/llm"
	"github.com/weft-run/weft/llm/providers"
)

// chatInput is where weft chat reads approval answers (a variable for
// tests).
var chatInput io.Reader = os.Stdin

// chatOptions are the flags of weft chat.
type chatOptions struct {
	model, baseURL, keyEnv string
	approve, deny          bool
	reason, by             string
	dataDir                string
	timeout                time.Duration
	prompt                 string
}

func parseChatFlags(args []string, stderr io.Writer) (chatOptions, error) {
	var o chatOptions
	fs := newFlagSet("chat", "--model PROVIDER:MODEL [--base-url URL] [--approve | --deny REASON] [--data DIR] PROMPT", `
Runs a one-off agent with the demo's tools (lookup, fetch_ticket, and deploy,
which needs an approval) on the embedded runtime, with a real model:

  openai:MODEL             OpenAI (OPENAI_API_KEY)
  anthropic:MODEL          Anthropic (ANTHROPIC_API_KEY)
  openai-compatible:MODEL  any server of the Chat Completions API at --base-url
                           (Ollama, vLLM, llama.cpp, LM Studio, OpenRouter…; a key
                           from --key-env when the server needs one)

The answer is printed as the model writes it. A tool call that needs an
approval is asked on the terminal, or decided by --approve or --deny REASON.
The session's event log stays in the data directory: weft show --data DIR SESSION.`, stderr)
	fs.StringVar(&o.model, "model", "", "the model, as `PROVIDER:MODEL` (openai, anthropic or openai-compatible)")
	fs.StringVar(&o.baseURL, "base-url", "", "the API's base `URL` (required for openai-compatible; optional for the others)")
	fs.StringVar(&o.keyEnv, "key-env", "", "the environment `VARIABLE` holding the API key (default: the provider's, e.g. OPENAI_API_KEY)")
	fs.BoolVar(&o.approve, "approve", false, "approve every tool call that needs an approval, without asking")
	fs.StringVar(&o.reason, "deny", "", "deny every tool call that needs an approval with this `reason`, without asking")
	fs.StringVar(&o.by, "by", "cli", "who decides, recorded with the decision")
	fs.StringVar(&o.dataDir, "data", defaultChatDataDir(), "the data `DIR` that keeps the event log")
	fs.DurationVar(&o.timeout, "timeout", 5*time.Minute, "give up after this long")
	if err := parseFlags(fs, args); err != nil {
		return o, err
	}
	o.deny = setFlags(fs)["deny"]
	switch {
	case o.model == "":
		return o, usageError(fs, "--model is required, e.g. --model openai:gpt-4.1-mini")
	case fs.NArg() != 1 || strings.TrimSpace(fs.Arg(0)) == "":
		return o, usageError(fs, "needs exactly one PROMPT, got %q", fs.Args())
	case o.approve && o.deny:
		return o, usageError(fs, "--approve and --deny exclude each other")
	case o.deny && o.reason == "":
		return o, usageError(fs, "--deny needs a reason")
	case o.by == "":
		return o, usageError(fs, "--by needs a name")
	case o.dataDir == "":
		return o, usageError(fs, "--data needs a directory")
	case o.timeout <= 0:
		return o, usageError(fs, "--timeout must be positive, got %v", o.timeout)
	}
	o.prompt = fs.Arg(0)
	return o, nil
}

// defaultChatDataDir is where weft chat keeps its event log unless told:
// weft/chat in the user's cache directory (every chat a session of it).
func defaultChatDataDir() string {
	dir, err := os.UserCacheDir()
	if err != nil {
		return filepath.Join(os.TempDir(), "weft-chat")
	}
	return filepath.Join(dir, "weft", "chat")
}

// runChat runs weft chat.
func runChat(ctx context.Context, args []string, stdout, stderr io.Writer) (err error) {
	o, err := parseChatFlags(args, stderr)
	if err != nil {
		return err
	}
	model, err := providers.New(o.model, providers.Options{BaseURL: o.baseURL, APIKeyEnv: o.keyEnv})
	if err != nil {
		return fmt.Errorf("chat: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, o.timeout)
	defer cancel()
	if err := os.MkdirAll(o.dataDir, 0o700); err != nil {
		return fmt.Errorf("chat: create the data directory: %w", err)
	}
	var mu sync.Mutex
	stdout, stderr = &lockedWriter{mu: &mu, w: stdout}, &lockedWriter{mu: &mu, w: stderr}
	rt, err := weft.Start(ctx, weft.Config{DataDir: o.dataDir})
	if err != nil {
		return fmt.Errorf("chat: %w", err)
	}
	defer func() {
		if cerr := rt.Close(); cerr != nil && err == nil {
			err = fmt.Errorf("chat: close the runtime: %w", cerr)
		}
	}()
	cfg, err := demoAgentConfig()
	if err != nil {
		return fmt.Errorf("chat: build the tools: %w", err)
	}
	cfg.Model = model
	cfg.Instructions = []string{"You help with support tickets. You can look tickets up, fetch them, and deploy releases; a deploy needs a person's approval."}
	agent, err := rt.NewAgent("chat", cfg)
	if err != nil {
		return fmt.Errorf("chat: %w", err)
	}
	sess := agent.NewSession()
	fmt.Fprintf(stderr, "weft chat: %s, session %s\n", llm.NameOf(model), sess.ID())
	follower, stop, err := followChat(rt, sess.ID(), stdout, stderr)
	if err != nil {
		return fmt.Errorf("chat: %w", err)
	}
	defer stop()

	res, err := sess.Run(ctx, o.prompt)
	answers := bufio.NewReader(chatInput)
	for err == nil && res.Status == weft.StatusWaiting {
		follower.awaitSettled()
		var decisions []weft.Decision
		if decisions, err = chatDecisions(o, res.Pending, answers, stderr); err == nil {
			res, err = sess.Resume(ctx, decisions...)
		}
	}
	if res != nil {
		follower.awaitSettled()
	}
	stop()
	if res != nil && res.Output != "" && !follower.wrote() {
		fmt.Fprint(stdout, res.Output) // the model did not stream it
	}
	fmt.Fprintln(stdout)
	fmt.Fprintf(stderr, "session %s: %s; usage %s\n", sess.ID(), statusOf(res, err), formatUsage(usageOf(res)))
	fmt.Fprintf(stderr, "event log: %s (weft show --data %s %s)\n", filepath.Join(o.dataDir, "nats"), o.dataDir, sess.ID())
	switch {
	case err != nil:
		return fmt.Errorf("chat: %w", err)
	case res.Status != weft.StatusCompleted:
		return fmt.Errorf("chat: the run ended %s: %v", res.Status, res.Err)
	}
	return nil
}

// chatFollower prints a chat session as it happens: what the model writes
// (its live output, on stdout), and its tool calls and their returns (on
// stderr). The live output and the events come on one channel, in the
// order the node published them.
type chatFollower struct {
	stdout, stderr io.Writer
	msgs           chan *nats.Msg
	settled        chan struct{} // an event that settles a run was printed
	done, stopped  chan struct{}
	mu             sync.Mutex
	streamed       bool // some text was printed as the model wrote it
}

// followChat subscribes to the session's live output and events.
func followChat(rt *weft.Runtime, sessionID string, stdout, stderr io.Writer) (f *chatFollower, stop func(), err error) {
	f = &chatFollower{stdout: stdout, stderr: stderr, msgs: make(chan *nats.Msg, 4096),
		settled: make(chan struct{}, 64), done: make(chan struct{}), stopped: make(chan struct{})}
	stream := events.SessionStream(sessionID)
	deltas, err := rt.Subjects().Delta(stream)
	if err != nil {
		return nil, nil, err
	}
	evs, err := rt.Subjects().StreamEvents(stream)
	if err != nil {
		return nil, nil, err
	}
	var subs []*nats.Subscription
	unsubscribe := func() {
		for _, s := range subs {
			_ = s.Unsubscribe()
		}
	}
	for _, subj := range []string{deltas, evs} {
		sub, err := rt.Conn().ChanSubscribe(subj, f.msgs)
		if err != nil {
			unsubscribe()
			return nil, nil, err
		}
		subs = append(subs, sub)
	}
	if err := rt.Conn().Flush(); err != nil {
		unsubscribe()
		return nil, nil, err
	}
	go f.loop()
	var once sync.Once
	return f, func() {
		once.Do(func() {
			unsubscribe()
			close(f.done)
			<-f.stopped
		})
	}, nil
}

func (f *chatFollower) loop() {
	defer close(f.stopped)
	for {
		select {
		case <-f.done:
			return
		case m := <-f.msgs:
			f.print(m)
		}
	}
}

// awaitSettled waits (a little, at most) until the event that settled the
// run has been printed, so that everything the node published before it
// is on the terminal.
func (f *chatFollower) awaitSettled() {
	select {
	case <-f.settled:
	case <-time.After(5 * time.Second):
	}
}

// wrote reports whether the model's text was printed as it was written.
func (f *chatFollower) wrote() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.streamed
}

func (f *chatFollower) print(m *nats.Msg) {
	ev, err := events.ParseEvent(m.Data)
	if err != nil {
		return
	}
	data, err := events.Decode(ev)
	if err != nil {
		return
	}
	switch d := data.(type) {
	case events.ModelDelta:
		if d.Text != "" {
			fmt.Fprint(f.stdout, d.Text)
			f.mu.Lock()
			f.streamed = true
			f.mu.Unlock()
		}
	case events.ToolRequested:
		fmt.Fprintf(f.stderr, "\n→ %s %s\n", d.Tool, compact(d.Arguments))
	case events.ToolReturned:
		var ret struct {
			Kind    string          `json:"kind"`
			Content json.RawMessage `json:"content"`
		}
		_ = json.Unmarshal(d.Return, &ret)
		if ret.Kind == "approval_required" {
			return // asked on the terminal
		}
		text := compact(ret.Content)
		if len(text) > 200 {
			text = text[:200] + "…"
		}
		fmt.Fprintf(f.stderr, "← %s (%s) %s\n", d.Tool, ret.Kind, text)
	case events.RunCompleted, events.RunFailed, events.RunCancelled, events.RunWaiting:
		f.settled <- struct{}{}
	}
}

// chatDecisions decides the pending items of a waiting run: by the flags,
// or by asking on the terminal (answers read from in).
func chatDecisions(o chatOptions, p weft.Pending, in *bufio.Reader, stderr io.Writer) ([]weft.Decision, error) {
	if len(p.Deferred) > 0 || len(p.Elicitations) > 0 {
		return nil, fmt.Errorf("the run waits for %d deferred call(s) and %d question(s), which weft chat does not decide: use weft approvals", len(p.Deferred), len(p.Elicitations))
	}
	var ds []weft.Decision
	for _, a := range p.Approvals {
		fmt.Fprintf(stderr, "\napproval needed: %s %s", a.Tool, compact(a.Arguments))
		if a.Reason != "" {
			fmt.Fprintf(stderr, " (%s)", a.Reason)
		}
		fmt.Fprintln(stderr)
		switch {
		case o.approve:
			fmt.Fprintf(stderr, "approved by %s (--approve)\n", o.by)
			ds = append(ds, weft.Approve(a.ID, o.by, nil))
			continue
		case o.deny:
			fmt.Fprintf(stderr, "denied by %s (--deny): %s\n", o.by, o.reason)
			ds = append(ds, weft.Deny(a.ID, o.by, o.reason))
			continue
		}
		fmt.Fprint(stderr, "approve? [y/N] ")
		line, err := in.ReadString('\n')
		if err != nil && line == "" {
			return nil, fmt.Errorf("no answer to the approval of %s (stdin ended): decide with --approve or --deny REASON", a.Tool)
		}
		if ans := strings.ToLower(strings.TrimSpace(line)); ans == "y" || ans == "yes" {
			ds = append(ds, weft.Approve(a.ID, o.by, nil))
			continue
		}
		fmt.Fprint(stderr, "reason for the denial: ")
		reason, _ := in.ReadString('\n')
		if reason = strings.TrimSpace(reason); reason == "" {
			reason = "denied on the terminal"
		}
		ds = append(ds, weft.Deny(a.ID, o.by, reason))
	}
	return ds, nil
}

// statusOf is how a chat's run ended.
func statusOf(res *weft.Result, err error) string {
	switch {
	case err != nil && res == nil:
		return "error"
	case res.Err != nil:
		return string(res.Status) + " (" + res.Err.Error() + ")"
	}
	return string(res.Status)
}

// usageOf is a result's usage (none without a result).
func usageOf(res *weft.Result) events.Usage {
	if res == nil {
		return events.Usage{}
	}
	return res.Usage
}
