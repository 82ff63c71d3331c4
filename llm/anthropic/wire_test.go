package anthropic

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "re-record the golden request bodies in testdata/")

// testKey is the API key the wire tests use; tests assert it never
// reaches an error.
const testKey = "sk-ant-test-0123456789abcdef"

// recorded is one request the test server received.
type recorded struct {
	Method, Path string
	Header       http.Header
	Body         []byte
}

// server is an httptest server playing the Messages API: it records each
// request and answers it with reply.
type server struct {
	*httptest.Server
	mu   sync.Mutex
	reqs []recorded
}

func newServer(t *testing.T, reply http.HandlerFunc) *server {
	t.Helper()
	s := &server{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		s.mu.Lock()
		s.reqs = append(s.reqs, recorded{Method: r.Method, Path: r.URL.Path, Header: r.Header.Clone(), Body: body})
		s.mu.Unlock()
		reply(w, r)
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *server) requests() []recorded {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]recorded(nil), s.reqs...)
}

// model returns a Model talking to s.
func (s *server) model(t *testing.T, opts ...Option) *Model {
	t.Helper()
	m, err := New("claude-sonnet-4-5", append([]Option{WithAPIKey(testKey), WithBaseURL(s.URL), WithHTTPClient(s.Client())}, opts...)...)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return m
}

// replyJSON answers with status and the body of testdata file name.
func replyJSON(t *testing.T, status int, name string, header ...string) http.HandlerFunc {
	t.Helper()
	body := readTestdata(t, name)
	return func(w http.ResponseWriter, _ *http.Request) {
		for i := 0; i+1 < len(header); i += 2 {
			w.Header().Set(header[i], header[i+1])
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		w.Write(body)
	}
}

// replySSE answers with the server-sent events of testdata file name.
func replySSE(t *testing.T, name string) http.HandlerFunc {
	t.Helper()
	body := readTestdata(t, name)
	return func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		w.Write(body)
	}
}

func readTestdata(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// canonical re-encodes a JSON document indented with sorted keys, numbers
// as they were, so that two bodies compare by content.
func canonical(t *testing.T, b []byte) []byte {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("body is not JSON: %v\n%s", err, b)
	}
	out, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return append(out, '\n')
}

// golden compares body with testdata/name, re-recording it with -update.
func golden(t *testing.T, name string, body []byte) {
	t.Helper()
	got := canonical(t, body)
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to record it)", err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("request body differs from %s (-want +got):\n%s", path, diff)
	}
}

func sprintf(format string, args ...any) string { return fmt.Sprintf(format, args...) }
