package bus_test

import (
	"testing"

	"github.com/nats-io/nats.go"

	"github.com/weft-run/weft/bus"
)

// Interest sees the subscriptions that reach a subject from the node's
// account, those of the role accounts that import it included, and only
// them: with the role accounts linked and nobody subscribed, an event
// subject has no interest; a reader's subscription gives it one.
func TestInterest(t *testing.T) {
	dir := t.TempDir()
	creds, err := bus.LoadOrCreateCredentials(dir)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := bus.StartServer(bus.ServerConfig{StoreDir: t.TempDir(), Credentials: creds})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Shutdown)
	node, err := srv.Connect()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(node.Close)
	interest, err := srv.Interest(node)
	if err != nil {
		t.Fatal(err)
	}
	const subject = "weft.evt.session.s1.run.started"
	if interest([]byte(subject)) {
		t.Fatalf("interest in %s with nobody subscribed", subject)
	}
	opt, err := nats.NkeyOptionFromSeed(creds.SeedFile(bus.RoleReader))
	if err != nil {
		t.Fatal(err)
	}
	reader, err := nats.Connect("", nats.InProcessServer(srv.NATSServer()), opt, nats.CustomInboxPrefix(bus.RoleReader.InboxPrefix()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(reader.Close)
	sub, err := reader.SubscribeSync("weft.evt.session.*.>")
	if err != nil {
		t.Fatal(err)
	}
	if err := reader.Flush(); err != nil {
		t.Fatal(err)
	}
	if !interest([]byte(subject)) {
		t.Fatalf("no interest in %s while a reader subscribes to %s", subject, sub.Subject)
	}
}
