package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/weft-run/weft/bus"
)

// A node serving TLS on its listener: its own runtime connects over TLS,
// and a command that trusts the certificate reads the log with its role's
// credentials; one that does not trust it is refused.
func TestServeListenTLS(t *testing.T) {
	cert, key := selfSignedCert(t)
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

// selfSignedCert writes a certificate for 127.0.0.1 (its own CA) and its
// key.
func selfSignedCert(t *testing.T) (certFile, keyFile string) {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "weft test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, IsCA: true, BasicConstraintsValid: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &k.PublicKey, k)
	if err != nil {
		t.Fatal(err)
	}
	kb, err := x509.MarshalECPrivateKey(k)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), 0o600); err != nil {
		t.Fatal(err)
	}
	return certFile, keyFile
}
