package weft_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/weft-run/weft"
	"github.com/weft-run/weft/bus"
	"github.com/weft-run/weft/events"
	"github.com/weft-run/weft/llm"
	"github.com/weft-run/weft/toolsets"
)

// The recovery tests re-execute the test binary as a child process
// (WEFT_CHILD names its part), kill it with SIGKILL at a chosen moment, and
// restart it on the same data directory.

const (
	envChild   = "WEFT_CHILD"
	envDir     = "WEFT_DIR"
	envSession = "WEFT_SESSION"
	envMark    = "WEFT_MARK"
)

// childModel calls tool name once, then answers text once the tool
// returned. It keeps no state, so a restarted process continues correctly.
func childModel(name, text string) llm.Model {
	return llm.Func(func(ctx context.Context, req *llm.Request) (*llm.Response, error) {
		last := req.Messages[len(req.Messages)-1]
		if len(last.ToolReturns()) > 0 {
			return &llm.Response{Text: text}, nil
		}
		return &llm.Response{ToolCalls: []llm.ToolCall{{ID: "call_1", Name: name, Arguments: []byte(`{}`)}}}, nil
	})
}

// runChild runs the child part named by WEFT_CHILD, if any, and reports
// whether it did.
func runChild() bool {
	mode := os.Getenv(envChild)
	if mode == "" {
		return false
	}
	if err := child(mode); err != nil {
		fmt.Println("ERROR", err)
		os.Exit(1)
	}
	os.Exit(0)
	return true
}

func child(mode string) error {
	if run, ok := childModes[mode]; ok {
		return run(mode) // the children of other files' tests
	}
	ctx := context.Background()
	rt, err := weft.Start(ctx, weft.Config{DataDir: os.Getenv(envDir), Sync: bus.SyncAlways})
	if err != nil {
		return err
	}
	defer rt.Close()
	deploy, err := toolsets.NewContextFunc("deploy", func(ctx context.Context, tc *toolsets.ToolContext, _ noArgs) (string, error) {
		if tc.Approval == nil {
			return "", toolsets.ApprovalRequired("production", nil)
		}
		return "deployed by " + tc.Approval.DecidedBy, nil
	})
	if err != nil {
		return err
	}
	work, err := toolsets.NewContextFunc("work", func(ctx context.Context, tc *toolsets.ToolContext, _ noArgs) (string, error) {
		f, err := os.OpenFile(os.Getenv(envMark), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err != nil {
			return "", err
		}
		fmt.Fprintf(f, "STARTED %s\n", tc.CallID)
		f.Close()
		if mode == "tool" {
			<-ctx.Done() // blocks until the process is killed
		}
		return "worked", nil
	})
	if err != nil {
		return err
	}
	deployer, err := rt.NewAgent("deployer", weft.AgentConfig{Model: childModel("deploy", "deployed"), Tools: []toolsets.Tool{deploy}})
	if err != nil {
		return err
	}
	worker, err := rt.NewAgent("worker", weft.AgentConfig{Model: childModel("work", "finished"), Tools: []toolsets.Tool{work}})
	if err != nil {
		return err
	}
	if _, err := rt.Recover(ctx); err != nil {
		return err
	}
	id := os.Getenv(envSession)
	switch mode {
	case "approval":
		res, err := deployer.Session(id).Run(ctx, "deploy")
		if err != nil {
			return err
		}
		fmt.Println("WAITING", res.Status, len(res.Pending.Approvals))
		select {} // wait to be killed
	case "tool":
		_, err := worker.Session(id).Run(ctx, "work")
		return fmt.Errorf("the run returned: %v", err)
	case "resume-approval":
		res, err := deployer.Session(id).Resume(ctx, weft.Approve("call_1", "ops", nil))
		if err != nil {
			return err
		}
		fmt.Println("RESULT", res.Status, res.Output)
	case "recover-tool":
		sess := worker.Session(id)
		st, err := sess.Status(ctx)
		if err != nil {
			return err
		}
		runID := st.Runs[len(st.Runs)-1].ID
		wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		res, err := sess.Wait(wctx, runID)
		if err != nil {
			return err
		}
		fmt.Println("RESULT", res.Status, res.Output)
	}
	return nil
}

// startChild starts the test binary in child mode and returns it with a
// reader of its stdout.
func startChild(t *testing.T, mode, dir, session, mark string) (*exec.Cmd, *bufio.Scanner) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), envChild+"="+mode, envDir+"="+dir, envSession+"="+session, envMark+"="+mark)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	return cmd, bufio.NewScanner(out)
}

func readLine(t *testing.T, sc *bufio.Scanner, prefix string) string {
	t.Helper()
	for sc.Scan() {
		if line := sc.Text(); strings.HasPrefix(line, prefix) || strings.HasPrefix(line, "ERROR") {
			if strings.HasPrefix(line, "ERROR") {
				t.Fatalf("child: %s", line)
			}
			return line
		}
	}
	t.Fatalf("child ended without a %q line", prefix)
	return ""
}

func kill(t *testing.T, cmd *exec.Cmd) {
	t.Helper()
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
}

// checkLog opens the data directory and checks the session's stream:
// versions 1..n, unique ids. It returns the events.
func checkLog(t *testing.T, dir, session string) []events.Event {
	t.Helper()
	rt, err := weft.Start(t.Context(), weft.Config{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	evs := streamEvents(t, rt, session)
	seen := map[uuid.UUID]bool{}
	for i, ev := range evs {
		if ev.Version != uint64(i+1) {
			t.Errorf("event %d has version %d", i, ev.Version)
		}
		if seen[ev.ID] {
			t.Errorf("event id %s twice", ev.ID)
		}
		seen[ev.ID] = true
	}
	return evs
}

func TestRecoveryWaitingForApproval(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	dir, session := t.TempDir(), "recovery-approval"
	cmd, out := startChild(t, "approval", dir, session, "")
	if line := readLine(t, out, "WAITING"); line != "WAITING waiting 1" {
		t.Fatalf("child: %s", line)
	}
	kill(t, cmd)

	cmd, out = startChild(t, "resume-approval", dir, session, "")
	if line := readLine(t, out, "RESULT"); line != "RESULT completed deployed" {
		t.Fatalf("child: %s", line)
	}
	_ = cmd.Wait()
	evs := checkLog(t, dir, session)
	var returned []string
	for _, ev := range evs {
		if ev.Type == events.TypeToolReturned {
			returned = append(returned, string(returnOf(t, ev).Kind))
		}
	}
	if got := strings.Join(returned, ","); got != "approval_required,success" {
		t.Errorf("returns = %s", got)
	}
	if last := evs[len(evs)-1].Type; last != events.TypeRunCompleted {
		t.Errorf("last event = %s", last)
	}
}

func TestRecoveryToolRunning(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	dir, session := t.TempDir(), "recovery-tool"
	mark := filepath.Join(t.TempDir(), "mark")
	cmd, _ := startChild(t, "tool", dir, session, mark)
	deadline := time.Now().Add(30 * time.Second)
	for {
		b, _ := os.ReadFile(mark)
		if strings.Contains(string(b), "STARTED call_1") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the tool never started")
		}
		time.Sleep(10 * time.Millisecond)
	}
	// Give the tool.started append a moment; the rule holds either way.
	time.Sleep(100 * time.Millisecond)
	kill(t, cmd)

	cmd, out := startChild(t, "recover-tool", dir, session, mark)
	if line := readLine(t, out, "RESULT"); line != "RESULT completed finished" {
		t.Fatalf("child: %s", line)
	}
	_ = cmd.Wait()
	b, _ := os.ReadFile(mark)
	if got := string(b); got != "STARTED call_1\nSTARTED call_1\n" {
		t.Errorf("tool runs = %q; want the same call id twice", got)
	}
	evs := checkLog(t, dir, session)
	returned := 0
	for _, ev := range evs {
		if ev.Type == events.TypeToolReturned {
			returned++
		}
	}
	if returned != 1 || evs[len(evs)-1].Type != events.TypeRunCompleted {
		t.Errorf("returned %d times; events %v", returned, types(evs))
	}
}
