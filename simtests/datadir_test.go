package simtests

import (
	"errors"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// Two weft serve processes on one data directory: the second exits with
// an error naming the first one's pid and writes nothing; once the first is
// killed (SIGKILL: no cleanup), a new one starts on the directory.
func TestServeRefusesALockedDataDir(t *testing.T) {
	h := newHarness(t)
	dir := filepath.Join(h.dir, "data")
	isReport := func(l string) bool { return strings.HasPrefix(l, "{") }
	first := h.start("first", bins.weft, "serve", "--data", dir, "--listen", "127.0.0.1:-1", "--json")
	if _, err := first.waitLine(h.ctx, isReport); err != nil {
		t.Fatal(err)
	}
	pid := strconv.Itoa(first.cmd.Process.Pid)

	out, err := exec.CommandContext(h.ctx, bins.weft, "serve", "--data", dir, "--listen", "127.0.0.1:-1", "--json").CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() == 0 {
		t.Fatalf("second weft serve on the directory: %v, want a non-zero exit\n%s", err, out)
	}
	if !strings.Contains(string(out), "in use by process "+pid) {
		t.Errorf("second weft serve said:\n%s\nwant it to name the first one's pid %s", out, pid)
	}

	first.signal(syscall.SIGKILL)
	<-first.done
	third := h.start("third", bins.weft, "serve", "--data", dir, "--listen", "127.0.0.1:-1", "--json")
	if _, err := third.waitLine(h.ctx, isReport); err != nil {
		t.Fatalf("weft serve after the holder was killed: %v", err)
	}
}
