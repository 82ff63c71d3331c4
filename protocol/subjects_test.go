package protocol

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/weft-run/weft/bus"
)

func subjectsOf(t testing.TB, root string) bus.Subjects {
	t.Helper()
	s, err := bus.NewSubjects(root)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestWorkerSubjects: the worker subjects under the default root and
// another one, each name or id escaped into one token.
func TestWorkerSubjects(t *testing.T) {
	other := subjectsOf(t, "acme.prod")
	call := func(s bus.Subjects, name string) string {
		subject, err := WorkerCallSubject(s, name)
		if err != nil {
			t.Fatal(err)
		}
		return subject
	}
	cancel := func(s bus.Subjects, session, run, callID string) string {
		subject, err := WorkerCancelSubject(s, session, run, callID)
		if err != nil {
			t.Fatal(err)
		}
		return subject
	}
	got := map[string]string{
		"call":            call(bus.Default, "lookup"),
		"call, escaped":   call(bus.Default, "a.b c"),
		"call, other":     call(other, "lookup"),
		"cancel":          cancel(bus.Default, "s-1", "r-1", "call_1"),
		"cancel, escaped": cancel(bus.Default, "s.1", "r*1", "call>1"),
		"cancel filter":   WorkerCancelFilter(other),
		"describe":        WorkerDescribeSubject(bus.Default),
		"describe, other": WorkerDescribeSubject(other),
	}
	want := map[string]string{
		"call":            "weft.worker.call.lookup",
		"call, escaped":   "weft.worker.call.a%2Eb%20c",
		"call, other":     "acme.prod.worker.call.lookup",
		"cancel":          "weft.worker.cancel.s-1.r-1.call_1",
		"cancel, escaped": "weft.worker.cancel.s%2E1.r%2A1.call%3E1",
		"cancel filter":   "acme.prod.worker.cancel.*.*.*",
		"describe":        "weft.worker.describe",
		"describe, other": "acme.prod.worker.describe",
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("subjects (-want +got):\n%s", d)
	}
	if _, err := WorkerCallSubject(bus.Default, ""); !errors.Is(err, bus.ErrInvalidToken) {
		t.Errorf("call subject of an empty name: %v, want ErrInvalidToken", err)
	}
}

// TestParseWorkerCancelSubject: a cancel subject gives back the three ids
// it was built from, and anything else is refused.
func TestParseWorkerCancelSubject(t *testing.T) {
	other := subjectsOf(t, "acme.prod")
	for _, ids := range [][3]string{{"s-1", "r-1", "call_1"}, {"s.1", "r 1", "call%1"}, {"sé", "*", ">"}} {
		for _, s := range []bus.Subjects{bus.Default, other} {
			subject, err := WorkerCancelSubject(s, ids[0], ids[1], ids[2])
			if err != nil {
				t.Fatal(err)
			}
			session, run, call, err := ParseWorkerCancelSubject(s, subject)
			if err != nil || [3]string{session, run, call} != ids {
				t.Errorf("ParseWorkerCancelSubject(%q) = %q, %q, %q, %v; want %q", subject, session, run, call, err, ids)
			}
		}
	}
	for name, subject := range map[string]string{
		"another root":     "acme.prod.worker.cancel.s.r.c",
		"a call subject":   "weft.worker.call.lookup",
		"two ids":          "weft.worker.cancel.s.r",
		"four ids":         "weft.worker.cancel.s.r.c.d",
		"a bad escape":     "weft.worker.cancel.s.r.c%zz",
		"an empty call id": "weft.worker.cancel.s.r.",
	} {
		if _, _, _, err := ParseWorkerCancelSubject(bus.Default, subject); !errors.Is(err, bus.ErrInvalidToken) {
			t.Errorf("%s: ParseWorkerCancelSubject(%q): %v, want ErrInvalidToken", name, subject, err)
		}
	}
}

// FuzzWorkerCancelSubject: every triple that makes a cancel subject
// parses back to itself.
func FuzzWorkerCancelSubject(f *testing.F) {
	f.Add("s-1", "r-1", "call_1")
	f.Add("s.1", "r 1", "%41")
	f.Fuzz(func(t *testing.T, session, run, call string) {
		subject, err := WorkerCancelSubject(bus.Default, session, run, call)
		if err != nil {
			return
		}
		s, r, c, err := ParseWorkerCancelSubject(bus.Default, subject)
		if err != nil || s != session || r != run || c != call {
			t.Errorf("ParseWorkerCancelSubject(%q) = %q, %q, %q, %v; want %q, %q, %q", subject, s, r, c, err, session, run, call)
		}
	})
}
