package main

import (
	"testing"

	"github.com/weft-run/weft/bus/bustest"

	"github.com/weft-run/weft/bus"
)

// A node serving TLS on its listener: its own runtime connects over TLS,
// and a command that trusts the certificate reads the log with its role's
// credentials; one that does not trust it is refused.
func TestServeListenTLS(t *testing.T) {
	cert, key := bustest.SelfSignedCert(t)
	n, err := startNode(t.Context(), nodeConfig{dataDir: t.TempDir(), listen: "127.0.0.1:-1", listenTLS: &bus.ServerTLS{CertFile: cert, KeyFile: key}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = n.close() })
	demoWaiting(t, n)
	out := mustCLI(t, "approvals", "--nats", n.url, "--creds-dir", n.credsDir, "--tls-ca", cert)
	wantContains(t, "approvals over TLS", out, "call_deploy")
	if _, _, err := cli(t, "approvals", "--nats", n.url, "--creds-dir", n.credsDir, "--timeout", "5s"); err == nil {
		t.Fatal("a client that does not trust the certificate was served")
	}
}
