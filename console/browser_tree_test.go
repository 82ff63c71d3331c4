package console_test

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestBrowserRunTree: at 390 px, from a sub-run's queue item to its
// parent's session, down to the child session by its sub-run link, and
// up again by the parent-call link; no page is wider than the screen.
func TestBrowserRunTree(t *testing.T) {
	n, parent := treeNode(t)
	tab := chrome(t, 390, 844)
	signIn(t, tab, n, approverToken)
	path := func(step string) string {
		t.Helper()
		if value(t, tab, step+": measure the width", chromedp.Evaluate[bool](`document.documentElement.scrollWidth > window.innerWidth`)) {
			t.Errorf("%s: the page is wider than 390 px", step)
		}
		return value(t, tab, step+": the location", chromedp.Evaluate[string](`location.pathname`))
	}
	path("the queue")
	do(t, tab, "the queue's parent chain to the parent session",
		chromedp.WaitVisible(chromedp.CSS(`a.parent-link`)),
		chromedp.ScrollIntoView(chromedp.CSS(`a.parent-link`)),
		chromedp.Click(chromedp.CSS(`a.parent-link`)),
		chromedp.WaitVisible(chromedp.CSS(`a.subrun`)),
	)
	if got := path("the parent page"); got != "/console/sessions/"+parent {
		t.Fatalf("the parent link led to %s, want the parent session", got)
	}
	do(t, tab, "down to a sub-run",
		chromedp.ScrollIntoView(chromedp.CSS(`a.subrun`)),
		chromedp.Click(chromedp.CSS(`a.subrun`)),
		chromedp.WaitVisible(chromedp.CSS(`a.parent-call`)),
	)
	child := path("the child page")
	if !strings.HasPrefix(child, "/console/sessions/") || child == "/console/sessions/"+parent {
		t.Fatalf("the sub-run link led to %s, want a child session", child)
	}
	do(t, tab, "up to the parent call",
		chromedp.ScrollIntoView(chromedp.CSS(`a.parent-call`)),
		chromedp.Click(chromedp.CSS(`a.parent-call`)),
		chromedp.WaitVisible(chromedp.CSS(`a.subrun`)),
	)
	if got := path("back on the parent page"); got != "/console/sessions/"+parent {
		t.Fatalf("the parent-call link led to %s, want the parent session", got)
	}
}
