package bustest

import (
	"testing"

	"github.com/nats-io/nats.go"

	"github.com/weft-run/weft/bus"
)

// Server starts an embedded server on a temporary store directory and
// connects to it in process; the connection and the server end with t.
func Server(t testing.TB) (*bus.Server, *nats.Conn) {
	t.Helper()
	srv, err := bus.StartServer(bus.ServerConfig{StoreDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Shutdown)
	nc, err := srv.Connect()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	return srv, nc
}
