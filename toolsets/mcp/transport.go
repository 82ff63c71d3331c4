package mcp

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// terminateAfter is how long closing a stdio server waits for it to exit
// after its stdin closed, before it is signalled.
const terminateAfter = 2 * time.Second

// lifetime makes a connection outlive the context it was opened with
// (the legacy SSE transport binds its event stream to that context) while
// still aborting the opening when that context ends first. Its context is
// the connection's own; cancel ends it when the connection is closed.
type lifetime struct {
	sdk.Transport
	ctx    context.Context // the connection's lifetime, owned by conn
	cancel context.CancelFunc
}

func (l *lifetime) Connect(ctx context.Context) (sdk.Connection, error) {
	stop := context.AfterFunc(ctx, l.cancel)
	c, err := l.Transport.Connect(l.ctx)
	if !stop() {
		// ctx ended while connecting: the connection, if any, is dead.
		if c != nil {
			_ = c.Close()
		}
		return nil, context.Cause(ctx)
	}
	return c, err
}

// dialer is one resolved transport: the SDK transport, the redactor of
// its secrets, and (stdio) the command and its stderr tail.
type dialer struct {
	transport *lifetime
	red       *redactor
	cmd       *exec.Cmd
	stderr    *tail
}

// dial resolves c's transport and secrets for one connection.
func dial(c *Config) (*dialer, error) {
	d := &dialer{red: &redactor{}}
	resolve := func(what string, vals map[string]Value) (map[string]string, error) {
		out := make(map[string]string, len(vals))
		for k, v := range vals {
			s, err := v.resolve()
			if err != nil {
				return nil, fmt.Errorf("%s %s: %w", what, k, err)
			}
			d.red.add(v, s)
			out[k] = s
		}
		return out, nil
	}
	headers, err := resolve("header", c.Headers)
	if err != nil {
		return nil, err
	}
	t := c.Transport
	var tr sdk.Transport
	switch t.Kind {
	case KindStdio:
		env, err := resolve("environment value", t.Env)
		if err != nil {
			return nil, err
		}
		cmd := exec.Command(t.Command, t.Args...)
		cmd.Dir = t.Dir
		for _, k := range InheritedEnv {
			if v, ok := os.LookupEnv(k); ok {
				if _, set := env[k]; !set {
					cmd.Env = append(cmd.Env, k+"="+v)
				}
			}
		}
		for k, v := range env {
			cmd.Env = append(cmd.Env, k+"="+v)
		}
		d.stderr = &tail{}
		cmd.Stderr = d.stderr
		d.cmd = cmd
		tr = &sdk.CommandTransport{Command: cmd, TerminateDuration: terminateAfter}
	case KindStreamableHTTP:
		d.red.urlSecrets(t.URL)
		tr = &sdk.StreamableClientTransport{Endpoint: t.URL, HTTPClient: httpClient(headers)}
	case KindSSE:
		d.red.urlSecrets(t.URL)
		tr = &sdk.SSEClientTransport{Endpoint: t.URL, HTTPClient: httpClient(headers)}
	default:
		return nil, fmt.Errorf("unknown transport %q", t.Kind)
	}
	ctx, cancel := context.WithCancel(context.Background())
	d.transport = &lifetime{Transport: tr, ctx: ctx, cancel: cancel}
	return d, nil
}

func httpClient(headers map[string]string) *http.Client {
	if len(headers) == 0 {
		return &http.Client{}
	}
	return &http.Client{Transport: &withHeaders{base: http.DefaultTransport, headers: headers}}
}

// withHeaders sets fixed headers on every request.
type withHeaders struct {
	base    http.RoundTripper
	headers map[string]string
}

func (w *withHeaders) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range w.headers {
		r.Header.Set(k, v)
	}
	return w.base.RoundTrip(r)
}
