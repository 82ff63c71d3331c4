package attacktests

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/weft-run/weft"
	"github.com/weft-run/weft/bus"
	"github.com/weft-run/weft/llm"
	"github.com/weft-run/weft/toolsets"
)

// wait bounds every wait of the suite for a refusal or an outcome.
const wait = 10 * time.Second

// bench is a weft node on an embedded nats-server with role credentials,
// listening on a loopback port like weft serve.
type bench struct {
	srv     *bus.Server
	url     string
	creds   *bus.Credentials
	rt      *weft.Runtime
	agent   *weft.Agent
	deploys atomic.Int32 // runs of the node's deploy tool
}

type noArgs struct{}

// newBench starts the server and the node; the node's agent "deployer"
// calls the local tool deploy, which needs an approval.
func newBench(t testing.TB) *bench {
	t.Helper()
	b := startNode(t)
	b.addAgent(t, nil)
	return b
}

// startNode starts the server and the node, with no agent.
func startNode(t testing.TB) *bench {
	t.Helper()
	dir := t.TempDir()
	creds, err := bus.LoadOrCreateCredentials(filepath.Join(dir, bus.CredentialsDir))
	if err != nil {
		t.Fatal(err)
	}
	srv, err := bus.StartServer(bus.ServerConfig{StoreDir: filepath.Join(dir, "nats"), Listen: "127.0.0.1:-1", Credentials: creds})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Shutdown)
	b := &bench{srv: srv, url: srv.ClientURL(), creds: creds}
	b.rt, err = weft.Start(t.Context(), weft.Config{NATSURL: b.url, NATSNKeySeedFile: creds.SeedFile(bus.RoleNode), NodeID: "n1"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.rt.Close() })
	return b
}

// addAgent registers the agent "deployer": its deploy tool is in remote
// when set, the node's own tool otherwise.
func (b *bench) addAgent(t testing.TB, remote toolsets.Toolset) {
	t.Helper()
	cfg := weft.AgentConfig{Model: deployModel(), ApprovalRequiredTools: []string{"deploy"}}
	var err error
	if remote != nil {
		cfg.Toolsets = []toolsets.Toolset{remote}
	} else {
		deploy, err := toolsets.NewContextFunc("deploy", func(context.Context, *toolsets.ToolContext, noArgs) (any, error) {
			b.deploys.Add(1)
			return "deployed by the real tool", nil
		})
		if err != nil {
			t.Fatal(err)
		}
		cfg.Tools = []toolsets.Tool{deploy}
	}
	if b.agent, err = b.rt.NewAgent("deployer", cfg); err != nil {
		t.Fatal(err)
	}
}

// deployModel calls deploy, then answers with the text of its return.
func deployModel() llm.Model {
	return llm.Func(func(_ context.Context, req *llm.Request) (*llm.Response, error) {
		msgs := req.Messages
		if n := len(msgs); n > 0 {
			if rets := msgs[n-1].ToolReturns(); len(rets) > 0 {
				var text string
				_ = json.Unmarshal(rets[0].Content, &text)
				return &llm.Response{Text: text}, nil
			}
		}
		return &llm.Response{ToolCalls: []llm.ToolCall{{ID: "d1", Name: "deploy", Arguments: json.RawMessage(`{}`)}}}, nil
	})
}

// waiting starts a run that waits for the approval of deploy.
func (b *bench) waiting(t testing.TB) (*weft.Session, *weft.Result) {
	t.Helper()
	sess := b.agent.NewSession()
	res, err := sess.Run(t.Context(), "deploy")
	if err != nil || res.Status != weft.StatusWaiting || len(res.Pending.Approvals) != 1 {
		t.Fatalf("Run = %+v, %v; want a run waiting for one approval", res, err)
	}
	return sess, res
}

// status returns the status of the session's last run.
func status(t *testing.T, sess *weft.Session) weft.Status {
	t.Helper()
	st, err := sess.Status(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Runs) == 0 {
		t.Fatalf("session %s has no run", sess.ID())
	}
	return st.Runs[len(st.Runs)-1].Status
}

// roleConn is a second connection, of one role, with its own credentials.
type roleConn struct {
	role bus.Role
	nc   *nats.Conn
	errs chan error
}

// conn connects as role r with the role's generated credentials.
func (b *bench) conn(t testing.TB, r bus.Role) *roleConn {
	t.Helper()
	c := &roleConn{role: r, errs: make(chan error, 64)}
	var err error
	c.nc, err = bus.Connect(t.Context(), []string{b.url},
		bus.WithRoleCredentials(b.creds.Dir(), r), bus.WithName("attack-"+string(r)),
		bus.WithNATSOptions(nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) {
			select {
			case c.errs <- err:
			default:
			}
		})))
	if err != nil {
		t.Fatalf("connect as %s: %v", r, err)
	}
	t.Cleanup(c.nc.Close)
	return c
}

// refused waits for the server's permissions violation naming subject.
func (c *roleConn) refused(t *testing.T, subject string) {
	t.Helper()
	timer := time.NewTimer(wait)
	defer timer.Stop()
	for {
		select {
		case err := <-c.errs:
			if strings.Contains(err.Error(), "Permissions Violation") && strings.Contains(err.Error(), subject) {
				return
			}
			t.Logf("%s: other async error: %v", c.role, err)
		case <-timer.C:
			t.Fatalf("%s: no permissions violation for %q within %v: the forgery was accepted", c.role, subject, wait)
		}
	}
}

// allowed checks that the connection got no permissions violation so far
// (after a round trip to the server).
func (c *roleConn) allowed(t *testing.T) {
	t.Helper()
	if err := c.nc.FlushTimeout(wait); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-c.errs:
		t.Fatalf("%s: %v", c.role, err)
	default:
	}
}

// lesser returns the roles other than node that are not in allowed.
func lesser(allowed ...bus.Role) []bus.Role {
	var out []bus.Role
	for _, r := range bus.Roles() {
		ok := r != bus.RoleNode
		for _, a := range allowed {
			ok = ok && r != a
		}
		if ok {
			out = append(out, r)
		}
	}
	return out
}
