package bus_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"go.uber.org/goleak"

	"github.com/weft-run/weft/bus"
)

// TestMain checks that no goroutine outlives the tests: every server and
// connection the tests start is shut down.
func TestMain(m *testing.M) {
	if os.Getenv(signalChildEnv) != "" {
		os.Exit(signalChild())
	}
	goleak.VerifyTestMain(m)
}

func start(t *testing.T, cfg bus.ServerConfig) *bus.Server {
	t.Helper()
	if cfg.StoreDir == "" {
		cfg.StoreDir = t.TempDir()
	}
	srv, err := bus.StartServer(cfg)
	if err != nil {
		t.Fatalf("StartServer: %v", err)
	}
	t.Cleanup(srv.Shutdown)
	return srv
}

func TestStartServerInProcess(t *testing.T) {
	srv := start(t, bus.ServerConfig{Sync: bus.SyncAlways})
	if got := srv.ClientURL(); got != "" {
		t.Errorf("ClientURL() = %q for a server that does not listen", got)
	}
	if !srv.NATSServer().ReadyForConnections(time.Second) || !srv.NATSServer().JetStreamEnabled() {
		t.Fatal("server not ready with JetStream after StartServer returned")
	}
	nc, err := srv.Connect()
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	sub, err := nc.SubscribeSync("weft.ping")
	if err != nil {
		t.Fatal(err)
	}
	if err := nc.Publish("weft.ping", []byte("x")); err != nil {
		t.Fatal(err)
	}
	if _, err := sub.NextMsg(5 * time.Second); err != nil {
		t.Fatalf("in-process round trip: %v", err)
	}
	srv.Shutdown()
	srv.Shutdown() // idempotent
	if srv.NATSServer().Running() {
		t.Fatal("server still running after Shutdown")
	}
}

func TestStartServerErrors(t *testing.T) {
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		cfg  bus.ServerConfig
	}{
		{"no store dir", bus.ServerConfig{}},
		{"store dir is a file", bus.ServerConfig{StoreDir: file, ReadyTimeout: time.Second}},
		{"token and password", bus.ServerConfig{StoreDir: t.TempDir(), Token: "t", Username: "u", Password: "p"}},
		{"bad listen address", bus.ServerConfig{StoreDir: t.TempDir(), Listen: "localhost"}},
		{"bad port", bus.ServerConfig{StoreDir: t.TempDir(), Listen: "127.0.0.1:x"}},
		{"unknown sync policy", bus.ServerConfig{StoreDir: t.TempDir(), Sync: bus.SyncPolicy(9)}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv, err := bus.StartServer(tc.cfg)
			if err == nil {
				srv.Shutdown()
				t.Fatal("StartServer succeeded")
			}
		})
	}
}

// TestStartServerNotReady makes the server fail to listen (the port is
// taken) and checks the ready check reports it as ErrServerNotReady.
func TestStartServerNotReady(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	srv, err := bus.StartServer(bus.ServerConfig{StoreDir: t.TempDir(), Listen: ln.Addr().String(), ReadyTimeout: 500 * time.Millisecond})
	if !errors.Is(err, bus.ErrServerNotReady) {
		if srv != nil {
			srv.Shutdown()
		}
		t.Fatalf("StartServer on a taken port: err = %v, want ErrServerNotReady", err)
	}
}

func TestConnectWithAuth(t *testing.T) {
	tokenSrv := start(t, bus.ServerConfig{Listen: "127.0.0.1:-1", Token: "s3cret"})
	userSrv := start(t, bus.ServerConfig{Listen: "127.0.0.1:-1", Username: "weft", Password: "pw"})
	tests := []struct {
		name string
		url  string
		opts []bus.ConnectOption
		ok   bool
	}{
		{"token", tokenSrv.ClientURL(), []bus.ConnectOption{bus.WithToken("s3cret")}, true},
		{"wrong token", tokenSrv.ClientURL(), []bus.ConnectOption{bus.WithToken("nope")}, false},
		{"no token", tokenSrv.ClientURL(), nil, false},
		{"user and password", userSrv.ClientURL(), []bus.ConnectOption{bus.WithUserPassword("weft", "pw"), bus.WithName("test")}, true},
		{"wrong password", userSrv.ClientURL(), []bus.ConnectOption{bus.WithUserPassword("weft", "x")}, false},
		{"two auth options", userSrv.ClientURL(), []bus.ConnectOption{bus.WithUserPassword("weft", "pw"), bus.WithToken("s3cret")}, false},
		{"missing creds file", userSrv.ClientURL(), []bus.ConnectOption{bus.WithCredsFile(filepath.Join(t.TempDir(), "none.creds"))}, false},
		{"tls cert without key", userSrv.ClientURL(), []bus.ConnectOption{bus.WithTLS(bus.TLSConfig{CertFile: "c.pem"})}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if !strings.HasPrefix(tc.url, "nats://127.0.0.1:") {
				t.Fatalf("ClientURL() = %q, want a loopback nats:// URL", tc.url)
			}
			ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
			defer cancel()
			nc, err := bus.Connect(ctx, []string{tc.url}, tc.opts...)
			if !tc.ok {
				if err == nil {
					nc.Close()
					t.Fatal("Connect succeeded")
				}
				if strings.Contains(err.Error(), "s3cret") || strings.Contains(err.Error(), ":pw@") {
					t.Fatalf("error leaks a credential: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Connect: %v", err)
			}
			defer nc.Close()
			if err := nc.Flush(); err != nil {
				t.Fatalf("Flush: %v", err)
			}
		})
	}
	// The in-process connection carries the configured credentials.
	nc, err := tokenSrv.Connect()
	if err != nil {
		t.Fatalf("in-process Connect to a token server: %v", err)
	}
	nc.Close()
}

func TestConnectBadInput(t *testing.T) {
	for _, urls := range [][]string{nil, {""}, {"nats://a:1, nats://b:2"}} {
		if nc, err := bus.Connect(t.Context(), urls); err == nil {
			nc.Close()
			t.Errorf("Connect(%q) succeeded", urls)
		}
	}
}

const signalChildEnv = "WEFT_BUS_SIGNAL_CHILD"

// TestNoSignalHandlers runs a child process that installs its own SIGINT
// handler, starts an embedded server and sends itself SIGINT. A server with
// signal handlers would shut down and exit the process; the embedded server
// must leave the signal to the application and keep serving.
func TestNoSignalHandlers(t *testing.T) {
	cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), signalChildEnv+"="+t.TempDir())
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "still serving") {
		t.Fatalf("child: %v\n%s", err, out)
	}
}

// signalChild is the child process of TestNoSignalHandlers.
func signalChild() int {
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGINT)
	srv, err := bus.StartServer(bus.ServerConfig{StoreDir: os.Getenv(signalChildEnv)})
	if err != nil {
		fmt.Println(err)
		return 1
	}
	defer srv.Shutdown()
	if err := syscall.Kill(os.Getpid(), syscall.SIGINT); err != nil {
		fmt.Println(err)
		return 1
	}
	select {
	case <-sigs:
	case <-time.After(10 * time.Second):
		fmt.Println("SIGINT not delivered to the application")
		return 1
	}
	time.Sleep(100 * time.Millisecond) // give a handler in the server time to act
	nc, err := srv.Connect(nats.Timeout(2 * time.Second))
	if err != nil || !srv.NATSServer().Running() {
		fmt.Println("server stopped after SIGINT:", err)
		return 1
	}
	nc.Close()
	fmt.Println("still serving")
	return 0
}

// A listen address whose port is taken is refused at once, saying so
// (still an ErrServerNotReady), rather than after the ready timeout.
func TestStartServerPortInUse(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	_, err = bus.StartServer(bus.ServerConfig{StoreDir: t.TempDir(), Listen: ln.Addr().String(), ReadyTimeout: time.Minute})
	if !errors.Is(err, syscall.EADDRINUSE) || !strings.Contains(err.Error(), "another server") {
		t.Fatalf("StartServer on a taken port: %v, want EADDRINUSE said at once", err)
	}
}
