package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// chatServer serves the Chat Completions API as an OpenAI-compatible
// server does, streamed: first a call of fetch_ticket, then a deploy
// (which needs an approval), then a text in pieces; it records the
// requests' Authorization headers and bodies.
type chatServer struct {
	mu     sync.Mutex
	auth   []string
	bodies []string
}

func (s *chatServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	s.mu.Lock()
	s.auth = append(s.auth, r.Header.Get("Authorization"))
	s.bodies = append(s.bodies, string(body))
	n := len(s.bodies)
	s.mu.Unlock()
	w.Header().Set("Content-Type", "text/event-stream")
	chunk := func(delta string, finish string) {
		f := "null"
		if finish != "" {
			f = `"` + finish + `"`
		}
		fmt.Fprintf(w, "data: {\"id\":\"c%d\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"test-model\",\"choices\":[{\"index\":0,\"delta\":%s,\"finish_reason\":%s}]}\n\n", n, delta, f)
	}
	call := func(id, name, args string) {
		chunk(fmt.Sprintf(`{"role":"assistant","tool_calls":[{"index":0,"id":%q,"type":"function","function":{"name":%q,"arguments":""}}]}`, id, name), "")
		chunk(fmt.Sprintf(`{"tool_calls":[{"index":0,"function":{"arguments":%q}}]}`, args), "")
		chunk(`{}`, "tool_calls")
	}
	switch n {
	case 1:
		call("call_fetch", "fetch_ticket", `{"ticket_id":"T-7"}`)
	case 2:
		call("call_deploy", "deploy", `{"release":"v1.4.2","environment":"production"}`)
	default:
		for _, piece := range []string{"Deployed ", "v1.4.2 ", "to production."} {
			chunk(fmt.Sprintf(`{"role":"assistant","content":%q}`, piece), "")
		}
		chunk(`{}`, "stop")
	}
	fmt.Fprint(w, "data: [DONE]\n\n")
}

// weft chat with an OpenAI-compatible server: the answer is streamed to
// stdout, the tool calls noted on stderr, the approval decided by
// --approve; the key named by --key-env is sent and shown nowhere.
func TestChatOpenAICompatible(t *testing.T) {
	srv := &chatServer{}
	hs := httptest.NewServer(srv)
	defer hs.Close()
	const secret = "sk-chat-test-9f8e7d6c5b4a"
	t.Setenv("CHAT_TEST_KEY", secret)
	dir := t.TempDir()
	out, errOut, err := cli(t, "chat", "--model", "openai-compatible:test-model", "--base-url", hs.URL+"/v1", "--key-env", "CHAT_TEST_KEY",
		"--approve", "--by", "erin", "--data", dir, "Fix ticket T-7.")
	if err != nil {
		t.Fatalf("weft chat: %v\nstdout:\n%s\nstderr:\n%s", err, out, errOut)
	}
	if !strings.Contains(out, "Deployed v1.4.2 to production.") {
		t.Errorf("stdout lacks the streamed answer:\n%s", out)
	}
	wantContains(t, "stderr", errOut, "openai-compatible:test-model", "→ fetch_ticket", "approval needed: deploy", "approved by erin", "completed", "weft show --data "+dir)
	for _, where := range []string{out, errOut} {
		if strings.Contains(where, secret) {
			t.Error("the API key is printed")
		}
	}
	srv.mu.Lock()
	defer srv.mu.Unlock()
	if len(srv.auth) != 3 || srv.auth[0] != "Bearer "+secret {
		t.Errorf("requests' Authorization %q, want 3 with the key", srv.auth)
	}
	var first struct {
		Stream bool `json:"stream"`
		Tools  []struct {
			Function struct {
				Name string `json:"name"`
			} `json:"function"`
		} `json:"tools"`
	}
	if err := json.Unmarshal([]byte(srv.bodies[0]), &first); err != nil || !first.Stream || len(first.Tools) != 3 {
		t.Errorf("first request %s (%v): want a streamed request offering the 3 demo tools", srv.bodies[0], err)
	}
	// The log, read back from the data directory, has the run and no key.
	show := mustCLI(t, "sessions", "--data", dir)
	if strings.Contains(show, secret) || !strings.Contains(show, "completed") {
		t.Errorf("weft sessions --data: %s", show)
	}
}

// Without --approve or --deny the approval is asked on the terminal; an
// answer that does not come (stdin ended) fails the chat with a message
// saying how to decide without a terminal.
func TestChatAsksOnTheTerminal(t *testing.T) {
	for _, tc := range []struct {
		input, want string
		ok          bool
	}{
		{"y\n", "Deployed v1.4.2 to production.", true},
		{"", "--approve or --deny", false},
	} {
		hs := httptest.NewServer(&chatServer{})
		chatInput = strings.NewReader(tc.input)
		out, errOut, err := cli(t, "chat", "--model", "openai-compatible:test-model", "--base-url", hs.URL+"/v1", "--data", t.TempDir(), "Fix ticket T-7.")
		hs.Close()
		if tc.ok != (err == nil) || !strings.Contains(out+errOut+fmt.Sprint(err), tc.want) {
			t.Errorf("input %q: err %v, want ok=%v and %q in:\n%s\n%s", tc.input, err, tc.ok, tc.want, out, errOut)
		}
	}
	chatInput = bytes.NewReader(nil)
}

// Mistakes in the flags are usage errors.
func TestChatUsage(t *testing.T) {
	for _, args := range [][]string{
		{"chat", "hello"},
		{"chat", "--model", "openai:x"},
		{"chat", "--model", "openai:x", "--approve", "--deny", "no", "hello"},
		{"chat", "--model", "nope", "--data", t.TempDir(), "hello"},
	} {
		if _, _, err := cli(t, args...); err == nil {
			t.Errorf("weft %v: no error", args)
		}
	}
}
