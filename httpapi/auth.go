package httpapi

import (
	"bufio"
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strings"
)

// Role is what a principal may do. The set is closed.
type Role string

// The roles. Every role reads; viewer only reads.
const (
	// RoleViewer reads: sessions, the HITL queue, event streams.
	RoleViewer Role = "viewer"
	// RoleOperator also starts and cancels runs.
	RoleOperator Role = "operator"
	// RoleApprover also decides pending items (approve, deny, complete,
	// fail).
	RoleApprover Role = "approver"
)

var roles = []Role{RoleViewer, RoleOperator, RoleApprover}

// ErrBadTokens: a token file (or the environment variable holding one)
// that does not parse; the error names the source and line, never a
// token.
var ErrBadTokens = errors.New("httpapi: bad token list")

// TokensEnv is the environment variable weft serve reads a token list
// from when no --http-tokens file is given (the file's format; entries
// may also be separated by ';').
const TokensEnv = "WEFT_HTTP_TOKENS"

// Principal is who a request comes from: the name a token maps to, or
// LocalPrincipal when the API runs without tokens.
type Principal struct {
	Name  string
	Roles []Role
	// Authenticated is set when a bearer token established Name.
	Authenticated bool
}

// LocalPrincipal is the name of every caller of an API without tokens
// (listening on loopback only): not authenticated, every role.
const LocalPrincipal = "local"

// Can reports whether p has role r (every role can read).
func (p Principal) Can(r Role) bool {
	return r == RoleViewer && len(p.Roles) > 0 || slices.Contains(p.Roles, r)
}

// Tokens maps bearer tokens to principals. It keeps only the tokens'
// SHA-256 hashes and compares a presented token's hash with every entry
// in constant time.
type Tokens struct {
	entries []tokenEntry
}

type tokenEntry struct {
	hash      [sha256.Size]byte
	principal Principal
}

// minTokenLen is the shortest plaintext token accepted (a guessable token
// is refused, not served).
const minTokenLen = 16

// Len returns the number of tokens.
func (t *Tokens) Len() int {
	if t == nil {
		return 0
	}
	return len(t.entries)
}

// ParseTokens reads a token list: one entry a line,
//
//	PRINCIPAL ROLES TOKEN
//
// separated by white space, where ROLES is a comma-separated list of
// viewer, operator and approver, and TOKEN is the token itself (at least
// 16 characters) or "sha256:" and the hex SHA-256 of the token, so that
// the list need not hold the tokens. Blank lines and lines starting with
// '#' are skipped; ';' also ends an entry. source names the list in
// errors (a file name, an environment variable).
func ParseTokens(r io.Reader, source string) (*Tokens, error) {
	t, _, err := parseTokens(r, source)
	return t, err
}

// parseTokens is ParseTokens, also reporting whether a token is given in
// plaintext.
func parseTokens(r io.Reader, source string) (*Tokens, bool, error) {
	t := &Tokens{}
	plain := false
	sc := bufio.NewScanner(r)
	line := 0
	for sc.Scan() {
		line++
		for entry := range strings.SplitSeq(sc.Text(), ";") {
			entry = strings.TrimSpace(entry)
			if entry == "" || strings.HasPrefix(entry, "#") {
				continue
			}
			e, isPlain, err := parseEntry(entry)
			if err != nil {
				return nil, false, fmt.Errorf("%w: %s:%d: %v", ErrBadTokens, source, line, err)
			}
			if slices.ContainsFunc(t.entries, func(o tokenEntry) bool { return o.hash == e.hash }) {
				return nil, false, fmt.Errorf("%w: %s:%d: the token of %q is listed before", ErrBadTokens, source, line, e.principal.Name)
			}
			plain = plain || isPlain
			t.entries = append(t.entries, e)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, false, fmt.Errorf("%w: %s: %v", ErrBadTokens, source, err)
	}
	return t, plain, nil
}

// parseEntry parses one entry; its errors never hold the token.
func parseEntry(entry string) (tokenEntry, bool, error) {
	f := strings.Fields(entry)
	if len(f) != 3 {
		return tokenEntry{}, false, fmt.Errorf("want PRINCIPAL ROLES TOKEN, got %d fields", len(f))
	}
	name, roleList, tok := f[0], f[1], f[2]
	if strings.ContainsFunc(name, func(r rune) bool { return r < 0x21 || r == 0x7f }) {
		return tokenEntry{}, false, fmt.Errorf("principal %q has a control character", name)
	}
	e := tokenEntry{principal: Principal{Name: name, Authenticated: true}}
	for r := range strings.SplitSeq(roleList, ",") {
		role := Role(r)
		if !slices.Contains(roles, role) {
			return tokenEntry{}, false, fmt.Errorf("principal %q: unknown role %q (want viewer, operator or approver)", name, r)
		}
		if !slices.Contains(e.principal.Roles, role) {
			e.principal.Roles = append(e.principal.Roles, role)
		}
	}
	if hexHash, ok := strings.CutPrefix(tok, "sha256:"); ok {
		b, err := hex.DecodeString(hexHash)
		if err != nil || len(b) != sha256.Size {
			return tokenEntry{}, false, fmt.Errorf("principal %q: the sha256: hash is not 64 hex digits", name)
		}
		copy(e.hash[:], b)
		return e, false, nil
	}
	if len(tok) < minTokenLen {
		return tokenEntry{}, false, fmt.Errorf("principal %q: the token is shorter than %d characters", name, minTokenLen)
	}
	e.hash = sha256.Sum256([]byte(tok))
	return e, true, nil
}

// LoadTokens reads the token list in file. A file that holds plaintext
// tokens must not be readable by group or others (mode 0600, as ssh asks
// of a key); one that holds only sha256: hashes may be.
func LoadTokens(file string) (*Tokens, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadTokens, err)
	}
	defer f.Close()
	t, plain, err := parseTokens(f, file)
	if err != nil {
		return nil, err
	}
	if plain {
		st, err := f.Stat()
		if err != nil {
			return nil, fmt.Errorf("%w: %v", ErrBadTokens, err)
		}
		if st.Mode().Perm()&0o077 != 0 {
			return nil, fmt.Errorf("%w: %s holds plaintext tokens and is readable by others (mode %04o): chmod 600 it, or list sha256: hashes", ErrBadTokens, file, st.Mode().Perm())
		}
	}
	return t, nil
}

// HashToken returns the "sha256:<hex>" form of token for a token list.
func HashToken(token string) string {
	h := sha256.Sum256([]byte(token))
	return "sha256:" + hex.EncodeToString(h[:])
}

// lookup returns the principal of token, comparing its hash with every
// entry in constant time.
func (t *Tokens) lookup(token string) (Principal, bool) {
	h := sha256.Sum256([]byte(token))
	found := -1
	for i := range t.entries {
		if subtle.ConstantTimeCompare(h[:], t.entries[i].hash[:]) == 1 {
			found = i
		}
	}
	if found < 0 {
		return Principal{}, false
	}
	return t.entries[found].principal, true
}

type principalKey struct{}

// principalOf returns the principal authenticate put in ctx.
func principalOf(ctx context.Context) Principal {
	p, _ := ctx.Value(principalKey{}).(Principal)
	return p
}

// authenticate establishes the request's principal: the bearer token's,
// or LocalPrincipal with every role when the API has no tokens. A request
// without a token, or with one no entry has, is answered 401 (the token is
// never logged or echoed).
func (a *API) authenticate(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var p Principal
		if a.tokens.Len() == 0 {
			p = Principal{Name: LocalPrincipal, Roles: roles}
		} else {
			scheme, tok, ok := strings.Cut(r.Header.Get("Authorization"), " ")
			if !ok || !strings.EqualFold(scheme, "Bearer") || strings.TrimSpace(tok) == "" {
				w.Header().Set("WWW-Authenticate", `Bearer realm="weft"`)
				writeError(w, http.StatusUnauthorized, "unauthenticated", "a bearer token is required (Authorization: Bearer TOKEN)")
				return
			}
			if p, ok = a.tokens.lookup(strings.TrimSpace(tok)); !ok {
				w.Header().Set("WWW-Authenticate", `Bearer realm="weft", error="invalid_token"`)
				writeError(w, http.StatusUnauthorized, "unauthenticated", "the bearer token is not valid")
				return
			}
		}
		if sw, ok := w.(*statusWriter); ok {
			sw.principal = p.Name // for the request's log line
		}
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), principalKey{}, p)))
	})
}

// require wraps h so that it runs only for a principal with role.
func require(role Role, h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		p := principalOf(r.Context())
		if !p.Can(role) {
			writeError(w, http.StatusForbidden, "forbidden", fmt.Sprintf("principal %q lacks the %s role", p.Name, role))
			return
		}
		h(w, r)
	}
}
