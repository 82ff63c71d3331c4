package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// followSSE reconnects when the stream drops and sends the id of the last
// event received as Last-Event-ID; the events come once each.
func TestFollowSSEResumes(t *testing.T) {
	var mu sync.Mutex
	var lastIDs []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		lastIDs = append(lastIDs, r.Header.Get("Last-Event-ID"))
		n := len(lastIDs)
		mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		from := 1
		if id := r.Header.Get("Last-Event-ID"); id != "" {
			fmt.Sscan(id, &from)
			from++
		}
		for i := from; i < from+2 && i <= 5; i++ {
			fmt.Fprintf(w, "id: %d\ndata: {\"n\":%d}\n\n", i, i)
		}
		if n == 1 {
			fmt.Fprint(w, "event: model.delta\ndata: {\"text\":\"x\"}\n\n: keep-alive\n\n")
		}
		// The handler returns: the connection's stream ends.
	}))
	defer srv.Close()
	c, err := newAPIClient(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	err = c.followSSE(t.Context(), "/events", func(e sseEvent) (bool, error) {
		got = append(got, e.id+e.typ+":"+string(e.data))
		return e.id == "5", nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := `1:{"n":1} 2:{"n":2} model.delta:{"text":"x"} 3:{"n":3} 4:{"n":4} 5:{"n":5}`
	if strings.Join(got, " ") != want {
		t.Errorf("events %q\nwant %q", strings.Join(got, " "), want)
	}
	if strings.Join(lastIDs, ",") != ",2,4" {
		t.Errorf("Last-Event-ID of the connections: %q, want none, 2, 4", lastIDs)
	}
}
