package httpapi_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/weft-run/weft/httpapi"
)

// A token list that does not parse is refused with its source and line,
// and the error never holds a token.
func TestParseTokensErrors(t *testing.T) {
	const secret = "abcdefghijklmnop-secret"
	tests := []struct {
		name, list, want string
	}{
		{"two fields", "alice viewer", "test:1: want PRINCIPAL ROLES TOKEN"},
		{"unknown role", "# c\n\nalice admin " + secret, "test:3: principal \"alice\": unknown role \"admin\""},
		{"short token", "alice viewer short", "test:1: principal \"alice\": the token is shorter than 16"},
		{"bad hash", "alice viewer sha256:zz", "test:1: principal \"alice\": the sha256: hash"},
		{"duplicate token", "alice viewer " + secret + "; bob viewer " + secret, "test:1: the token of \"bob\" is listed before"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := httpapi.ParseTokens(strings.NewReader(tc.list), "test")
			if !errors.Is(err, httpapi.ErrBadTokens) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want %q", err, tc.want)
			}
			if strings.Contains(err.Error(), secret) {
				t.Fatalf("the error holds the token: %v", err)
			}
		})
	}
}

// A file with plaintext tokens readable by others is refused; with mode
// 0600, or holding only hashes, it loads.
func TestLoadTokensMode(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string, mode os.FileMode) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, mode); err != nil {
			t.Fatal(err)
		}
		return p
	}
	plain := "alice viewer abcdefghijklmnop-secret\n"
	if _, err := httpapi.LoadTokens(write("open", plain, 0o644)); !errors.Is(err, httpapi.ErrBadTokens) || !strings.Contains(err.Error(), "readable by others") {
		t.Fatalf("plaintext 0644: %v", err)
	}
	if tok, err := httpapi.LoadTokens(write("closed", plain, 0o600)); err != nil || tok.Len() != 1 {
		t.Fatalf("plaintext 0600: %v", err)
	}
	if tok, err := httpapi.LoadTokens(write("hashed", "alice viewer "+httpapi.HashToken("x")+"\n", 0o644)); err != nil || tok.Len() != 1 {
		t.Fatalf("hashes 0644: %v", err)
	}
}

// Without tokens the API listens on loopback only (the address bound is
// checked, so every interface is refused too); with tokens anywhere.
func TestListenLoopbackOnly(t *testing.T) {
	open := newFixture(t, fixtureOptions{noTokens: true})
	for _, addr := range []string{"0.0.0.0:0", ":0"} {
		if ln, err := open.api.Listen(addr, nil); !errors.Is(err, httpapi.ErrNotLoopback) {
			if ln != nil {
				_ = ln.Close()
			}
			t.Fatalf("listen on %s without tokens: %v, want ErrNotLoopback", addr, err)
		}
	}
	ln, err := open.api.Listen("127.0.0.1:0", nil)
	if err != nil {
		t.Fatal(err)
	}
	_ = ln.Close()
	authed := newFixture(t, fixtureOptions{})
	ln, err = authed.api.Listen("0.0.0.0:0", nil)
	if err != nil {
		t.Fatalf("listen on every interface with tokens: %v", err)
	}
	_ = ln.Close()
}
