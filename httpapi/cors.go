package httpapi

import (
	"net/http"
	"slices"
)

// corsHandled adds the CORS headers of an allowed origin and answers a
// preflight request (returning true). Without CORSOrigins it does
// nothing: browsers then refuse cross-origin calls.
func (a *API) corsHandled(w http.ResponseWriter, r *http.Request) bool {
	origin := r.Header.Get("Origin")
	if len(a.cors) == 0 || origin == "" || !slices.Contains(a.cors, origin) && !slices.Contains(a.cors, "*") {
		return false
	}
	h := w.Header()
	h.Set("Access-Control-Allow-Origin", origin)
	h.Add("Vary", "Origin")
	h.Set("Access-Control-Expose-Headers", "Location")
	if r.Method != http.MethodOptions || r.Header.Get("Access-Control-Request-Method") == "" {
		return false
	}
	h.Set("Access-Control-Allow-Methods", "GET, POST")
	h.Set("Access-Control-Allow-Headers", "Authorization, Content-Type, Idempotency-Key, Last-Event-ID")
	h.Set("Access-Control-Max-Age", "600")
	w.WriteHeader(http.StatusNoContent)
	return true
}
