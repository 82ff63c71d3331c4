package httpapi_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"log"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/weft-run/weft/httpapi"
)

// testCA is a CA that issues the test's certificates.
type testCA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	pem  []byte
}

func newCA(t *testing.T, name string) *testCA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: name}, NotBefore: time.Now().Add(-time.Hour),
		NotAfter: time.Now().Add(time.Hour), IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	return &testCA{cert: cert, key: key, pem: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})}
}

// issue returns a certificate and key (PEM) for name.
func (ca *testCA) issue(t *testing.T, name string, usage x509.ExtKeyUsage) (certPEM, keyPEM []byte) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: name}, NotBefore: time.Now().Add(-time.Hour),
		NotAfter: time.Now().Add(time.Hour), ExtKeyUsage: []x509.ExtKeyUsage{usage}, KeyUsage: x509.KeyUsageDigitalSignature,
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	kb, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb})
}

// With a client CA the API requires a client certificate it signed, then
// the bearer token as before.
func TestMutualTLS(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	dir := t.TempDir()
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	ca, other := newCA(t, "weft test CA"), newCA(t, "another CA")
	srvCert, srvKey := ca.issue(t, "node", x509.ExtKeyUsageServerAuth)
	cfg := &httpapi.TLSConfig{CertFile: write("srv.crt", srvCert), KeyFile: write("srv.key", srvKey), ClientCAFile: write("ca.crt", ca.pem)}
	ln, err := f.api.Listen("127.0.0.1:0", cfg)
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: f.api, ReadHeaderTimeout: 5 * time.Second, ErrorLog: log.New(io.Discard, "", 0)}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(ca.pem)
	client := func(certPEM, keyPEM []byte) *http.Client {
		conf := &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12}
		if certPEM != nil {
			c, err := tls.X509KeyPair(certPEM, keyPEM)
			if err != nil {
				t.Fatal(err)
			}
			conf.Certificates = []tls.Certificate{c}
		}
		return &http.Client{Transport: &http.Transport{TLSClientConfig: conf}}
	}
	get := func(c *http.Client) (int, error) {
		req, _ := http.NewRequestWithContext(t.Context(), "GET", "https://"+ln.Addr().String()+"/v1/whoami", nil)
		req.Header.Set("Authorization", "Bearer "+viewerToken)
		resp, err := c.Do(req)
		if err != nil {
			return 0, err
		}
		resp.Body.Close()
		return resp.StatusCode, nil
	}
	good, goodKey := ca.issue(t, "client", x509.ExtKeyUsageClientAuth)
	bad, badKey := other.issue(t, "client", x509.ExtKeyUsageClientAuth)
	if code, err := get(client(good, goodKey)); err != nil || code != http.StatusOK {
		t.Fatalf("a client certificate of the CA: %d %v", code, err)
	}
	for name, c := range map[string]*http.Client{"no certificate": client(nil, nil), "another CA's": client(bad, badKey)} {
		if code, err := get(c); err == nil {
			t.Errorf("%s: answered %d, want the handshake refused", name, code)
		}
	}
}
