package weft_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/weft-run/weft"
)

// A second runtime on a data directory another one holds is refused with a
// *DataDirLockedError naming the holder's pid (here: this process), and
// writes nothing; once the first closes, the directory opens again.
func TestStartRefusesALockedDataDir(t *testing.T) {
	dir := t.TempDir()
	first, err := weft.Start(t.Context(), weft.Config{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = first.Close() })

	second, err := weft.Start(t.Context(), weft.Config{DataDir: dir})
	if err == nil {
		_ = second.Close()
		t.Fatal("a second runtime started on a data directory the first one holds")
	}
	var held *weft.DataDirLockedError
	if !errors.Is(err, weft.ErrDataDirLocked) || !errors.As(err, &held) {
		t.Fatalf("second Start: %v, want a *DataDirLockedError", err)
	}
	if held.PID != os.Getpid() || held.Dir != dir || !strings.Contains(err.Error(), strconv.Itoa(os.Getpid())) {
		t.Errorf("second Start: %v (%+v), want it to name this process's pid %d and %s", err, held, os.Getpid(), dir)
	}
	if _, err := weft.LockDataDir(dir); !errors.Is(err, weft.ErrDataDirLocked) {
		t.Errorf("LockDataDir while a runtime holds the directory: %v, want ErrDataDirLocked", err)
	}
	b, err := os.ReadFile(filepath.Join(dir, weft.DataDirLockFile))
	if err != nil || strings.TrimSpace(string(b)) != strconv.Itoa(os.Getpid()) {
		t.Errorf("lock file holds %q (%v), want the holder's pid %d", b, err, os.Getpid())
	}

	if err := first.Close(); err != nil {
		t.Fatal(err)
	}
	again, err := weft.Start(t.Context(), weft.Config{DataDir: dir})
	if err != nil {
		t.Fatalf("Start after the holder closed: %v", err)
	}
	_ = again.Close()
}

// lockHelperDir, in the environment, makes TestDataDirLockHelper a runtime
// on that data directory that waits to be killed.
const lockHelperDir = "WEFT_TEST_LOCK_HELPER_DIR"

// TestDataDirLockHelper is the child process of
// TestDataDirLockReleasedByCrash; it skips itself otherwise.
func TestDataDirLockHelper(t *testing.T) {
	dir := os.Getenv(lockHelperDir)
	if dir == "" {
		t.Skip("the child process of TestDataDirLockReleasedByCrash")
	}
	rt, err := weft.Start(context.Background(), weft.Config{DataDir: dir})
	if err != nil {
		fmt.Println("error:", err)
		os.Exit(1)
	}
	fmt.Println("started")
	time.Sleep(time.Minute) // until the parent kills it
	_ = rt.Close()
	os.Exit(1)
}

// A process that holds a data directory and dies by SIGKILL (no cleanup at
// all) leaves it unlocked: the operating system releases the lock.
func TestDataDirLockReleasedByCrash(t *testing.T) {
	if runtime.GOOS == "windows" || runtime.GOOS == "plan9" {
		t.Skip("no flock here: LockDataDir locks nothing")
	}
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestDataDirLockHelper$", "-test.count=1")
	cmd.Env = append(os.Environ(), lockHelperDir+"="+dir)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	lines := make(chan string, 16)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
		exited <- cmd.Wait()
	}()
	t.Cleanup(func() { _ = cmd.Process.Kill(); <-exited })
	for started := false; !started; {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatal("the child exited before it started its runtime")
			}
			started = l == "started"
			if strings.HasPrefix(l, "error:") {
				t.Fatalf("child: %s", l)
			}
		case <-ctx.Done():
			t.Fatal("the child did not start its runtime in time")
		}
	}

	_, err = weft.Start(ctx, weft.Config{DataDir: dir})
	var held *weft.DataDirLockedError
	if !errors.As(err, &held) || held.PID != cmd.Process.Pid {
		t.Fatalf("Start while the child holds the directory: %v, want a *DataDirLockedError naming pid %d", err, cmd.Process.Pid)
	}

	if err := cmd.Process.Kill(); err != nil { // SIGKILL
		t.Fatal(err)
	}
	for range lines {
	}
	rt, err := weft.Start(ctx, weft.Config{DataDir: dir})
	if err != nil {
		t.Fatalf("Start after the holder was killed: %v", err)
	}
	_ = rt.Close()
}
