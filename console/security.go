package console

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"net/http"
)

// The cookies of the console.
const (
	tokenCookie = "weft_console_token"
	csrfCookie  = "weft_console_csrf"
	csrfHeader  = "X-CSRF-Token"
	csrfField   = "csrf"
)

// CSP is the Content-Security-Policy of every console response: nothing
// but this origin's script, style and connections; no inline script, no
// framing, forms post only here.
const CSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; " +
	"form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

// secure sets the security headers of every response.
func secure(w http.ResponseWriter) {
	h := w.Header()
	h.Set("Content-Security-Policy", CSP)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cache-Control", "no-store")
	h.Set("Cross-Origin-Opener-Policy", "same-origin")
}

// csrfSeed returns the browser's CSRF cookie, setting a new one when it
// has none.
func (c *Console) csrfSeed(w http.ResponseWriter, r *http.Request) string {
	if ck, err := r.Cookie(csrfCookie); err == nil && len(ck.Value) >= 32 {
		return ck.Value
	}
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	v := base64.RawURLEncoding.EncodeToString(b)
	http.SetCookie(w, &http.Cookie{Name: csrfCookie, Value: v, Path: c.prefix + "/", HttpOnly: true, Secure: r.TLS != nil, SameSite: http.SameSiteStrictMode})
	return v
}

// csrfToken is the token of a CSRF cookie value: its HMAC under the
// process's key.
func (c *Console) csrfToken(seed string) string {
	m := hmac.New(sha256.New, c.key)
	m.Write([]byte(seed))
	return hex.EncodeToString(m.Sum(nil))
}

// checkCSRF refuses a state-changing request that comes from another
// site, or lacks the token of its browser's CSRF cookie (in the
// X-CSRF-Token header or the csrf form field). It answers 403 itself.
func (c *Console) checkCSRF(w http.ResponseWriter, r *http.Request) bool {
	switch r.Header.Get("Sec-Fetch-Site") {
	case "", "same-origin", "none":
	default:
		http.Error(w, "cross-site request refused", http.StatusForbidden)
		return false
	}
	ck, err := r.Cookie(csrfCookie)
	if err != nil || ck.Value == "" {
		http.Error(w, "no CSRF cookie: reload the page", http.StatusForbidden)
		return false
	}
	got := r.Header.Get(csrfHeader)
	if got == "" {
		got = r.PostFormValue(csrfField)
	}
	want := c.csrfToken(ck.Value)
	if got == "" || !hmac.Equal([]byte(got), []byte(want)) {
		http.Error(w, "missing or wrong CSRF token: reload the page", http.StatusForbidden)
		return false
	}
	return true
}
