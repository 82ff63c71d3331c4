package console_test

import (
	"context"
	"fmt"
	"iter"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/weft-run/weft"
	"github.com/weft-run/weft/llm"
)

// The browser tests drive Debian's chromium headless through chromedp.
// Without chromium they skip, unless WEFT_CONSOLE_BROWSER=require (CI),
// which makes them fail. WEFT_CONSOLE_SCREENSHOTS=1 writes the README's
// screenshots into docs/console.

// chrome returns a browser context (its first tab) at width x height.
func chrome(t *testing.T, width, height int) context.Context {
	t.Helper()
	path := ""
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			path = p
			break
		}
	}
	if path == "" {
		if os.Getenv("WEFT_CONSOLE_BROWSER") == "require" {
			t.Fatal("chromium is not installed and WEFT_CONSOLE_BROWSER=require")
		}
		t.Skip("chromium is not installed (apt-get install chromium); set WEFT_CONSOLE_BROWSER=require to fail instead")
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(path),
		chromedp.Flag("headless", true),
		chromedp.Flag("no-sandbox", true),
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("no-first-run", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.UserDataDir(filepath.Join(t.TempDir(), "profile")),
		chromedp.WindowSize(width, height),
	}
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelB := chromedp.NewContext(actx)
	t.Cleanup(func() {
		cancelB()
		cancelA()
	})
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(int64(width), int64(height))); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	return ctx
}

// do runs actions with a deadline, failing the test with what step.
func do(t *testing.T, ctx context.Context, step string, actions ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	tctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	if err := chromedp.Do(tctx, actions...); err != nil {
		t.Fatalf("%s: %v", step, err)
	}
}

// value runs a, which gives a value, with a deadline.
func value[T any](t *testing.T, ctx context.Context, step string, a chromedp.Action[T]) T {
	t.Helper()
	tctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	v, err := chromedp.Run(tctx, a)
	if err != nil {
		t.Fatalf("%s: %v", step, err)
	}
	return v
}

func signIn(t *testing.T, ctx context.Context, n *node, token string) {
	t.Helper()
	do(t, ctx, "sign in",
		chromedp.Navigate(n.srv.URL+"/console/signin"),
		chromedp.WaitVisible(chromedp.ID("#token")),
		chromedp.SendKeys(chromedp.ID("token"), token),
		chromedp.Click(chromedp.ID("#signin")),
		chromedp.WaitVisible(chromedp.ID("#queue")),
	)
}

// waitLive waits until the page's event stream is open.
func waitLive(t *testing.T, ctx context.Context) {
	t.Helper()
	do(t, ctx, "the live stream opens", poll(`document.body.dataset.live === "open"`))
}

// poll waits until expression is true, checking every 50 ms (a tab in
// the background runs no animation frames, chromedp's default).
func poll(expression string) chromedp.Action[chromedp.Void] {
	return chromedp.Poll[chromedp.Void](expression, chromedp.WithPollingInterval(50*time.Millisecond), chromedp.WithPollingTimeout(15*time.Second))
}

// screenshot writes docs/console/name.png when WEFT_CONSOLE_SCREENSHOTS=1.
func screenshot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	if os.Getenv("WEFT_CONSOLE_SCREENSHOTS") != "1" {
		return
	}
	png := value(t, ctx, "screenshot "+name, chromedp.CaptureScreenshot())
	if len(png) > 300<<10 {
		t.Errorf("screenshot %s is %d KB, over 300 KB", name, len(png)>>10)
	}
	if err := os.WriteFile(filepath.Join("..", "docs", "console", name+".png"), png, 0o644); err != nil {
		t.Fatal(err)
	}
}

// decideIn clicks the button of an item's action (with args in its
// textarea when not empty) and returns what the item then says.
func decideIn(t *testing.T, ctx context.Context, item, action, args string) string {
	t.Helper()
	if args != "" {
		do(t, ctx, "edit the arguments", chromedp.SetValue(chromedp.CSS(item+` form[action$="/`+action+`"] textarea`), args))
	}
	do(t, ctx, action,
		chromedp.Evaluate[chromedp.Void](`document.querySelector(`+strconvQuote(item+" .result")+`).textContent = ""`),
		chromedp.Click(chromedp.CSS(item+` button.`+action)),
		poll(`document.querySelector(`+strconvQuote(item+" .result")+`).textContent !== ""`),
	)
	return value(t, ctx, "the item's answer", chromedp.Evaluate[string](`document.querySelector(`+strconvQuote(item+" .result")+`).textContent`))
}

func strconvQuote(s string) string { return strconv.Quote(s) }

// TestBrowserConsole: sign in; an approval appears live; edited arguments
// that fail the schema are refused inline, then approved while a second
// browser (a viewer) watches the run complete; a forged request without the CSRF token
// gets 403; a denial shows with its reason; a tool result with HTML
// stays text.
func TestBrowserConsole(t *testing.T) {
	n := okTool(t)
	tab := chrome(t, 1280, 900)
	signIn(t, tab, n, approverToken)
	waitLive(t, tab)

	// A run asks for approval: the queue shows it without a reload.
	s := n.agent.NewSession()
	runID, err := s.Start(t.Context(), "deploy please")
	if err != nil {
		t.Fatal(err)
	}
	item := `article.item[data-key="` + s.ID() + `/c1"]`
	do(t, tab, "the approval appears live", chromedp.WaitVisible(chromedp.CSS(item)))
	screenshot(t, tab, "queue")

	// A second browser, signed in as a viewer, watches the session.
	watch := chrome(t, 1280, 900)
	signIn(t, watch, n, viewerToken)
	do(t, watch, "open the session", chromedp.Navigate(n.srv.URL+"/console/sessions/"+s.ID()), chromedp.WaitVisible(chromedp.ID("#timeline")))
	waitLive(t, watch)

	// Edited arguments the schema refuses: the API's message, inline.
	args := item + ` form[action$="/approve"] textarea`
	do(t, tab, "approve with arguments the schema refuses",
		chromedp.SetValue(chromedp.CSS(args), `{"env": 7}`),
		chromedp.Click(chromedp.CSS(item+` button.approve`)),
		chromedp.WaitVisible(chromedp.CSS(item+` .result.error`)),
	)
	msg := value(t, tab, "the refusal", chromedp.Evaluate[string](`document.querySelector(`+strconvQuote(item+" .result")+`).textContent`))
	if !strings.Contains(msg, "env") {
		t.Errorf("the refusal says %q, want the schema's complaint about env", msg)
	}
	if got := decideIn(t, tab, item, "approve", `{"env": "staging"}`); got != "sent" {
		t.Fatalf("approve with edited arguments: %q", got)
	}
	do(t, watch, "the second browser sees the run complete",
		poll(`document.getElementById("timeline").textContent.includes("run completed")`),
	)
	timeline := value(t, watch, "the timeline", chromedp.Evaluate[string](`document.getElementById("timeline").textContent`))
	if !strings.Contains(timeline, "deployed staging") || !strings.Contains(timeline, "approved by ana") {
		t.Errorf("the timeline lacks the edited run or its approval:\n%s", timeline)
	}
	screenshot(t, watch, "timeline")
	if res, err := s.Wait(t.Context(), runID); err != nil || res.Status != weft.StatusCompleted {
		t.Fatalf("Wait = %+v, %v", res, err)
	}

	// A forged request from the page's own origin without the token.
	other := n.agent.NewSession()
	if _, err := other.Start(t.Context(), "deploy please"); err != nil {
		t.Fatal(err)
	}
	otherItem := `article.item[data-key="` + other.ID() + `/c1"]`
	do(t, tab, "the second approval appears", chromedp.WaitVisible(chromedp.CSS(otherItem)))
	forge := fmt.Sprintf(`fetch("/console/sessions/%s/pending/c1/approve", {method: "POST", credentials: "same-origin",
		headers: {"Content-Type": "application/x-www-form-urlencoded"}, body: "arguments="}).then(r => r.status)`, other.ID())
	status := value(t, tab, "a forged request", chromedp.Evaluate[int](forge, chromedp.EvalAwaitPromise))
	if status != 403 {
		t.Errorf("a request without the CSRF token: %d, want 403", status)
	}

	// A denial with its reason.
	do(t, tab, "deny",
		chromedp.SendKeys(chromedp.CSS(otherItem+` form[action$="/deny"] input[name="reason"]`), "not on a Friday"),
		chromedp.Click(chromedp.CSS(otherItem+` button.deny`)),
		chromedp.WaitVisible(chromedp.CSS(otherItem+` .result.ok`)),
	)
	do(t, tab, "the denial on the timeline",
		chromedp.Navigate(n.srv.URL+"/console/sessions/"+other.ID()),
		poll(`document.getElementById("timeline").textContent.includes("denied by ana")`),
	)
	timeline = value(t, tab, "the timeline", chromedp.Evaluate[string](`document.getElementById("timeline").textContent`))
	if !strings.Contains(timeline, "not on a Friday") {
		t.Errorf("the denial's reason is not on the timeline:\n%s", timeline)
	}

	// An item decided elsewhere says by whom, live.
	elsewhere := n.agent.NewSession()
	if res, err := elsewhere.Run(t.Context(), "deploy please"); err != nil || res.Status != weft.StatusWaiting {
		t.Fatalf("Run = %+v, %v", res, err)
	}
	elsewhereItem := `article.item[data-key="` + elsewhere.ID() + `/c1"]`
	do(t, tab, "back to the queue", chromedp.Navigate(n.srv.URL+"/console/queue"), chromedp.WaitVisible(chromedp.CSS(elsewhereItem)))
	waitLive(t, tab)
	if _, err := elsewhere.Decide(t.Context(), weft.Deny("c1", "bob", "someone else's call")); err != nil {
		t.Fatal(err)
	}
	do(t, tab, "the item says who decided it", poll(`(document.querySelector(`+strconvQuote(elsewhereItem+" .result")+`) || {}).textContent?.includes("denied by bob")`))

	// A tool result with HTML in it renders as text.
	evil := n.agent.NewSession()
	if res, err := evil.Run(t.Context(), "deploy please"); err != nil || res.Status != weft.StatusWaiting {
		t.Fatalf("Run = %+v, %v", res, err)
	}
	if _, err := evil.Decide(t.Context(), weft.Approve("c1", "ana", []byte(`{"env":"<script>window.pwned=1</script><img src=x onerror=\"window.pwned=2\">"}`))); err != nil {
		t.Fatal(err)
	}
	do(t, tab, "the HTML result as text",
		chromedp.Navigate(n.srv.URL+"/console/sessions/"+evil.ID()),
		poll(`document.getElementById("timeline").textContent.includes("deployed <script>window.pwned=1</script>")`),
	)
	pwned := value(t, tab, "look for the tool's HTML", chromedp.Evaluate[bool](`window.pwned !== undefined || document.querySelector("#timeline script, #timeline img") !== null`))
	if pwned {
		t.Error("the tool's HTML ran or became elements")
	}
}

// slowStreamer streams its answer in pieces, 80 ms apart, after release.
type slowStreamer struct {
	release chan struct{}
	text    string
}

func (m slowStreamer) Request(ctx context.Context, req *llm.Request) (*llm.Response, error) {
	return &llm.Response{Text: m.text}, nil
}

func (m slowStreamer) Stream(ctx context.Context, req *llm.Request) iter.Seq2[llm.StreamEvent, error] {
	return func(yield func(llm.StreamEvent, error) bool) {
		<-m.release
		for _, w := range strings.SplitAfter(m.text, " ") {
			time.Sleep(80 * time.Millisecond)
			if !yield(llm.StreamEvent{TextDelta: w}, nil) {
				return
			}
		}
		yield(llm.StreamEvent{Response: &llm.Response{Text: m.text}}, nil)
	}
}

// TestBrowserLiveOutput: the session page shows the model's text as it
// streams.
func TestBrowserLiveOutput(t *testing.T) {
	n := okTool(t)
	model := slowStreamer{release: make(chan struct{}), text: "the quick brown fox jumps over the lazy dog"}
	a, err := n.rt.NewAgent("writer", weft.AgentConfig{Model: model})
	if err != nil {
		t.Fatal(err)
	}
	s := a.NewSession()
	runID, err := s.Start(t.Context(), "write")
	if err != nil {
		t.Fatal(err)
	}
	tab := chrome(t, 1280, 900)
	signIn(t, tab, n, viewerToken)
	do(t, tab, "open the session", chromedp.Navigate(n.srv.URL+"/console/sessions/"+s.ID()), chromedp.WaitVisible(chromedp.ID("#timeline")))
	waitLive(t, tab)
	close(model.release)
	do(t, tab, "the first words arrive before the response",
		poll(`document.getElementById("deltas").textContent.includes("quick")`))
	partial := value(t, tab, "the live text", chromedp.Text(chromedp.ID("deltas")))
	if strings.Contains(partial, "lazy dog") {
		t.Logf("the whole text had arrived by the first look: %q", partial)
	}
	do(t, tab, "the whole text", poll(`document.getElementById("deltas").textContent === "the quick brown fox jumps over the lazy dog"`))
	if _, err := s.Wait(t.Context(), runID); err != nil {
		t.Fatal(err)
	}
}

// TestBrowserNarrow: at 390 px the queue fits the width and its approve
// button works.
func TestBrowserNarrow(t *testing.T) {
	n := okTool(t)
	session := n.waiting(t)
	tab := chrome(t, 390, 844)
	signIn(t, tab, n, approverToken)
	item := `article.item[data-key="` + session + `/c1"]`
	do(t, tab, "the queue at 390 px", chromedp.WaitVisible(chromedp.CSS(item+` button.approve`)))
	overflow := value(t, tab, "measure the width", chromedp.Evaluate[bool](`document.documentElement.scrollWidth > window.innerWidth`))
	if overflow {
		t.Error("the queue is wider than 390 px")
	}
	screenshot(t, tab, "queue-narrow")
	do(t, tab, "approve at 390 px",
		chromedp.ScrollIntoView(chromedp.CSS(item+` button.approve`)),
		chromedp.Click(chromedp.CSS(item+` button.approve`)),
		chromedp.WaitVisible(chromedp.CSS(item+` .result.ok`)),
	)
}
