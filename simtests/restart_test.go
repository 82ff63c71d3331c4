package simtests

import (
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/weft-run/weft/events"
)

// demoReport is the part of weft demo -serve --json's first line this
// test uses: serveReport and the demo run left waiting.
type demoReport struct {
	serveReport
	Demo struct {
		SessionID string `json:"session_id"`
		RunID     string `json:"run_id"`
		Pending   []struct {
			ID string `json:"id"`
		} `json:"pending"`
	} `json:"demo"`
}

// A node on its embedded server (weft demo -serve --data D) leaves the
// demo run waiting and is killed (SIGKILL): it releases no lease. weft
// serve --data D, started again on the same data directory and port, is
// the same node, and the first approval sent once it has reported that it
// is ready is served (the decision recorded, the run completed) within the
// approve command's own default timeout. Before, the restarted process was
// a new node: it forwarded the command to the dead one, whose lease had not
// expired yet, and the approval waited silently until its timeout.
func TestRestartEmbeddedNodeAfterKill(t *testing.T) {
	h := newHarness(t)
	dir := filepath.Join(h.dir, "node")
	listen := fmt.Sprintf("127.0.0.1:%d", freePorts(t, 1)[0])

	first := h.start("weft-demo", bins.weft, "demo", "-serve", "-data", dir, "-listen", listen, "-json")
	var demo demoReport
	readReport(t, h, first, &demo)
	if demo.Node == "" || demo.Demo.SessionID == "" || len(demo.Demo.Pending) != 1 || demo.Demo.Pending[0].ID != "call_deploy" {
		t.Fatalf("weft demo -serve reported %+v", demo)
	}
	first.kill()

	second := h.start("weft-serve", bins.weft, "serve", "-data", dir, "-listen", listen, "-json")
	var rep serveReport
	readReport(t, h, second, &rep)
	if rep.Node != demo.Node {
		t.Errorf("restarted on its data directory, the node is %q, want %q (the killed one)", rep.Node, demo.Node)
	}

	// The approve command's default timeout bounds the wait. It
	// authenticates with the approver seed the first start generated in
	// the data directory, which the restarted server admits.
	if want := filepath.Join(dir, "credentials"); rep.CredsDir != want || demo.CredsDir != want {
		t.Errorf("credentials in %q, then %q; want %q", demo.CredsDir, rep.CredsDir, want)
	}
	out, err := exec.CommandContext(h.ctx, bins.weft, "approve", "call_deploy", "--by", "alice", "--nats", rep.URL, "--creds-dir", rep.CredsDir, "--json").CombinedOutput()
	if err != nil {
		t.Fatalf("weft approve right after the restart: %v\n%s", err, out)
	}
	var got struct {
		SessionID string        `json:"session_id"`
		RunID     string        `json:"run_id"`
		Settled   *events.Event `json:"settled"`
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("weft approve printed %q: %v", out, err)
	}
	if got.SessionID != demo.Demo.SessionID || got.RunID != demo.Demo.RunID || got.Settled == nil || got.Settled.Type != events.TypeRunCompleted {
		t.Errorf("weft approve reported session %s, run %s, settled by %+v; want session %s, run %s completed",
			got.SessionID, got.RunID, got.Settled, demo.Demo.SessionID, demo.Demo.RunID)
	}
}

// readReport decodes the first JSON line p prints (weft serve's report
// that it is ready) into v.
func readReport(t *testing.T, h *harness, p *proc, v any) {
	t.Helper()
	line, err := p.waitLine(h.ctx, func(s string) bool { return strings.HasPrefix(s, "{") })
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(line), v); err != nil {
		t.Fatalf("%s reported %q: %v", p.name, line, err)
	}
}
