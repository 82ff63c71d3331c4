package console

import (
	"context"
	"crypto/rand"
	"embed"
	"errors"
	"html/template"
	"io/fs"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/weft-run/weft/events"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

// Prefix is where the console is served.
const Prefix = "/console"

// Config configures the console.
type Config struct {
	// API is the node's HTTP API handler (httpapi.API): every read and
	// decision goes through it with the cookie's token.
	API http.Handler
	// Store is the event log, for timelines, the chain check and the
	// JSONL download.
	Store events.Store
	// Unauthenticated is set when the API has no tokens (every caller is
	// its local principal, on loopback): the console needs no sign-in.
	Unauthenticated bool
	// Logger receives diagnostics (never a token); nil discards them.
	Logger *slog.Logger
	// Now is the clock of ages; nil: time.Now.
	Now func() time.Time
}

// ErrConfig: New without an API or a store.
var ErrConfig = errors.New("console: Config needs API and Store")

// Console is the web console, an http.Handler for Prefix and below.
type Console struct {
	api    http.Handler
	store  events.Store
	open   bool
	log    *slog.Logger
	now    func() time.Time
	key    []byte
	prefix string
	tmpl   *template.Template
	mux    *http.ServeMux
	staged staged
}

// New returns the console.
func New(cfg Config) (*Console, error) {
	if cfg.API == nil || cfg.Store == nil {
		return nil, ErrConfig
	}
	c := &Console{api: cfg.API, store: cfg.Store, open: cfg.Unauthenticated, log: cfg.Logger, now: cfg.Now, prefix: Prefix, mux: http.NewServeMux()}
	if c.log == nil {
		c.log = slog.New(slog.DiscardHandler)
	}
	if c.now == nil {
		c.now = time.Now
	}
	c.key = make([]byte, 32)
	_, _ = rand.Read(c.key)
	var err error
	c.tmpl, err = template.New("").Funcs(funcs).ParseFS(templateFS, "templates/*.html")
	if err != nil {
		return nil, err
	}
	static, _ := fs.Sub(staticFS, "static")
	p := c.prefix
	c.mux.Handle("GET "+p+"/static/", http.StripPrefix(p+"/static/", http.FileServerFS(static)))
	c.mux.HandleFunc("GET "+p+"/{$}", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, p+"/queue", http.StatusSeeOther) })
	c.mux.HandleFunc("GET "+p+"/signin", c.signinPage)
	c.mux.HandleFunc("POST "+p+"/signin", c.signin)
	c.mux.HandleFunc("POST "+p+"/signout", c.signout)
	c.mux.HandleFunc("GET "+p+"/queue", c.signedIn(c.queuePage))
	c.mux.HandleFunc("GET "+p+"/queue/items", c.signedIn(c.queueItems))
	c.mux.HandleFunc("GET "+p+"/stream", c.signedIn(c.queueStream))
	c.mux.HandleFunc("GET "+p+"/sessions", c.signedIn(c.sessionsPage))
	c.mux.HandleFunc("GET "+p+"/sessions/{session}", c.signedIn(c.sessionPage))
	c.mux.HandleFunc("GET "+p+"/sessions/{session}/timeline", c.signedIn(c.timelineFragment))
	c.mux.HandleFunc("GET "+p+"/sessions/{session}/stream", c.signedIn(c.sessionStream))
	c.mux.HandleFunc("GET "+p+"/sessions/{session}/events.jsonl", c.signedIn(c.download))
	c.mux.HandleFunc("POST "+p+"/sessions/{session}/pending/{call}/{action}", c.signedIn(c.decide))
	c.mux.HandleFunc("GET "+p+"/sessions/{session}/pending/{call}/decision", c.signedIn(c.decisionOf))
	return c, nil
}

// ServeHTTP serves the console: the security headers on every response,
// the CSRF check on every non-GET.
func (c *Console) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	secure(w)
	if r.Method != http.MethodGet && r.Method != http.MethodHead && !c.checkCSRF(w, r) {
		return
	}
	c.mux.ServeHTTP(w, r)
}

// view is what every page's template gets besides its own data.
type view struct {
	Prefix    string
	CSRF      string
	Principal principal
	Title     string
	Nav       string
	Open      bool
	Data      any
}

type ctxKey struct{}

// caller is the signed-in browser: its token (never rendered) and the
// API's principal for it.
type caller struct {
	token string
	p     principal
}

func callerOf(ctx context.Context) caller { c, _ := ctx.Value(ctxKey{}).(caller); return c }

// signedIn runs h for a browser whose cookie's token the API accepts;
// others go to the sign-in page (a fetch of a fragment gets 401).
func (c *Console) signedIn(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		token := ""
		if ck, err := r.Cookie(tokenCookie); err == nil {
			token = ck.Value
		}
		if token == "" && !c.open {
			c.toSignIn(w, r)
			return
		}
		p, err := c.whoami(r.Context(), token)
		if errors.Is(err, errSignedOut) {
			c.toSignIn(w, r)
			return
		}
		if err != nil {
			c.fail(w, r, err)
			return
		}
		h(w, r.WithContext(context.WithValue(r.Context(), ctxKey{}, caller{token: token, p: p})))
	}
}

func (c *Console) toSignIn(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet || r.Header.Get("Accept") == "application/json" || strings.HasSuffix(r.URL.Path, "/items") ||
		strings.HasSuffix(r.URL.Path, "/timeline") || strings.HasSuffix(r.URL.Path, "/stream") {
		http.Error(w, "sign in", http.StatusUnauthorized)
		return
	}
	http.Redirect(w, r, c.prefix+"/signin", http.StatusSeeOther)
}

// render writes page name with data.
func (c *Console) render(w http.ResponseWriter, r *http.Request, name, title, nav string, data any) {
	v := view{Prefix: c.prefix, CSRF: c.csrfToken(c.csrfSeed(w, r)), Principal: callerOf(r.Context()).p, Title: title, Nav: nav, Open: c.open, Data: data}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	if err := c.tmpl.ExecuteTemplate(w, name, v); err != nil {
		c.log.Warn("console: render", "page", name, "err", err)
	}
}

// fail answers an error the API or the log gave.
func (c *Console) fail(w http.ResponseWriter, r *http.Request, err error) {
	status := http.StatusInternalServerError
	var ae *apiError
	if errors.As(err, &ae) {
		status = ae.Status
	}
	c.log.Warn("console", "path", r.URL.Path, "err", err)
	http.Error(w, err.Error(), status)
}
