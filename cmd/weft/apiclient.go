package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"

	"github.com/spf13/pflag"
)

// errAPI is an error answer of a node's HTTP API.
var errAPI = errors.New("the API refused")

// apiFlags are --url (default $WEFT_URL); the token is read from
// $WEFT_TOKEN only, never from a flag (it would show in ps and in shell
// history).
type apiFlags struct {
	url string
}

func addAPIFlags(fs *pflag.FlagSet) *apiFlags {
	a := &apiFlags{}
	fs.StringVar(&a.url, "url", os.Getenv(apiURLEnv), "the node's HTTP API base `URL` (default $"+apiURLEnv+"; the token from $"+apiTokenEnv+")")
	return a
}

// apiClient calls a node's HTTP API.
type apiClient struct {
	base  *url.URL
	token string
	hc    *http.Client
}

// newAPIClient returns a client of the API at raw (an http or https URL).
func newAPIClient(raw string) (*apiClient, error) {
	u, err := url.Parse(strings.TrimRight(raw, "/"))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("%w: --url %q: want http(s)://HOST:PORT", errUsage, raw)
	}
	return &apiClient{base: u, token: os.Getenv(apiTokenEnv), hc: &http.Client{}}, nil
}

// request builds a request of path (with query) and a JSON body.
func (c *apiClient) request(ctx context.Context, method, path string, body any) (*http.Request, error) {
	var r io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return nil, err
		}
		r = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base.String()+path, r)
	if err != nil {
		return nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	return req, nil
}

// do sends req and decodes a 2xx answer into out (when not nil); an
// error answer is an errAPI with the API's code and message (never the
// token, which the request's headers alone hold).
func (c *apiClient) do(req *http.Request, out any) error {
	resp, err := c.hc.Do(req)
	if err != nil {
		return fmt.Errorf("%s %s: %w", req.Method, req.URL.Path, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return apiErrorOf(req, resp)
	}
	if out == nil {
		return nil
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		return fmt.Errorf("%s %s: the answer: %w", req.Method, req.URL.Path, err)
	}
	return nil
}

// apiErrorOf reads an error answer.
func apiErrorOf(req *http.Request, resp *http.Response) error {
	var body struct {
		Error struct{ Code, Message string } `json:"error"`
	}
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if json.Unmarshal(b, &body) != nil || body.Error.Code == "" {
		return fmt.Errorf("%w: %s %s: %s", errAPI, req.Method, req.URL.Path, resp.Status)
	}
	return fmt.Errorf("%w: %s %s: %s %s: %s", errAPI, req.Method, req.URL.Path, resp.Status, body.Error.Code, body.Error.Message)
}

// sseEvent is one Server-Sent Event.
type sseEvent struct {
	id   string
	typ  string // "" for the default "message"
	data []byte
}

// readSSE calls fn with each event of an event stream until it ends, fn
// returns an error or stop true.
func readSSE(r io.Reader, fn func(sseEvent) (stop bool, err error)) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	var ev sseEvent
	var data [][]byte
	for sc.Scan() {
		line := sc.Bytes()
		if len(line) == 0 {
			if data != nil {
				ev.data = bytes.Join(data, []byte("\n"))
				if stop, err := fn(ev); stop || err != nil {
					return err
				}
			}
			ev, data = sseEvent{}, nil
			continue
		}
		field, value, _ := bytes.Cut(line, []byte(":"))
		value = bytes.TrimPrefix(value, []byte(" "))
		switch string(field) {
		case "id":
			ev.id = string(value)
		case "event":
			ev.typ = string(value)
		case "data":
			data = append(data, bytes.Clone(value))
		}
	}
	if err := sc.Err(); err != nil {
		return err
	}
	return io.ErrUnexpectedEOF // the server ended the stream
}

// followSSE follows the event stream at path, reconnecting with
// Last-Event-ID (the id of the last event received) when the connection
// ends, until fn says stop or ctx ends. An error answer (401, 403, 404…)
// is not retried.
func (c *apiClient) followSSE(ctx context.Context, path string, fn func(sseEvent) (bool, error)) error {
	last := ""
	for attempt := 0; ; attempt++ {
		req, err := c.request(ctx, http.MethodGet, path, nil)
		if err != nil {
			return err
		}
		req.Header.Set("Accept", "text/event-stream")
		if last != "" {
			req.Header.Set("Last-Event-ID", last)
		}
		resp, err := c.hc.Do(req)
		if err == nil && resp.StatusCode/100 != 2 {
			err = apiErrorOf(req, resp)
			resp.Body.Close()
			return err
		}
		if err == nil {
			stopped := false
			err = readSSE(resp.Body, func(ev sseEvent) (bool, error) {
				if ev.id != "" {
					last = ev.id
				}
				stop, err := fn(ev)
				stopped = stop
				return stop, err
			})
			resp.Body.Close()
			if stopped || (err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && ctx.Err() == nil && !isConnErr(err)) {
				return err
			}
		}
		if ctx.Err() != nil {
			return fmt.Errorf("follow %s: %w", path, ctx.Err())
		}
		if attempt >= 50 {
			return fmt.Errorf("follow %s: %w", path, err)
		}
		select {
		case <-ctx.Done():
		case <-timeAfter(attempt):
		}
	}
}

// isConnErr says whether err is the connection's (worth a reconnect).
func isConnErr(err error) bool {
	var ne interface{ Timeout() bool }
	return errors.As(err, &ne) || errors.Is(err, io.EOF) || strings.Contains(err.Error(), "connection")
}
