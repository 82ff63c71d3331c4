package bus

import (
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
)

// A guard forwarding a request when its server goes away, before Close or
// while Close waits, closes without waiting out guardTimeout for an answer
// that cannot arrive. The bound is generous (a loaded machine, -race) and
// far below guardTimeout.
func TestGuardCloseWithServerGone(t *testing.T) {
	for _, tc := range []struct {
		name       string
		goneBefore bool
	}{{"gone before Close", true}, {"gone during Close", false}} {
		t.Run(tc.name, func(t *testing.T) { testGuardCloseWithServerGone(t, tc.goneBefore) })
	}
}

func testGuardCloseWithServerGone(t *testing.T, goneBefore bool) {
	const closeBound = 3 * time.Second
	// A server without JetStream, whose API one silent subscriber takes:
	// the forwarded request stays in flight.
	srv, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: -1, NoLog: true, NoSigs: true})
	if err != nil {
		t.Fatal(err)
	}
	go srv.Start()
	if !srv.ReadyForConnections(5 * time.Second) {
		t.Fatal("server not ready")
	}
	t.Cleanup(srv.Shutdown)
	connect := func() *nats.Conn {
		nc, err := nats.Connect("", nats.InProcessServer(srv))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(nc.Close)
		return nc
	}
	api, client := connect(), connect()
	forwarded := make(chan struct{}, 1)
	if _, err := api.Subscribe(jsAPI+">", func(*nats.Msg) { forwarded <- struct{}{} }); err != nil {
		t.Fatal(err)
	}
	if err := api.Flush(); err != nil {
		t.Fatal(err)
	}
	g, err := ServeJSGuard(connect(), DefaultLayout())
	if err != nil {
		t.Fatal(err)
	}
	if err := client.PublishRequest("$WEFT.GUARD.reader.CONSUMER.CREATE.WEFT_EVENTS.c1", client.NewRespInbox(), []byte(`{"config":{"name":"c1"}}`)); err != nil {
		t.Fatal(err)
	}
	select {
	case <-forwarded:
	case <-time.After(5 * time.Second):
		t.Fatal("the guard did not forward the request")
	}

	if goneBefore {
		srv.Shutdown()
	}
	closed := make(chan error, 1)
	go func() { closed <- g.Close() }()
	if !goneBefore {
		// Close waits for the request still in flight; the server
		// goes away while it waits.
		select {
		case <-closed:
			t.Fatal("Close returned with a request in flight on a live connection")
		case <-time.After(100 * time.Millisecond):
		}
		srv.Shutdown()
	}
	select {
	case <-closed:
	case <-time.After(closeBound):
		t.Fatalf("Close did not return within %v", closeBound)
	}
}
