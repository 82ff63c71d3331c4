// Package console is weft's web console: the HITL queue and session
// timelines, served under /console next to the HTTP API (weft serve
// --http mounts it; it is off unless the API is on).
//
// The pages are server-rendered html/template, with one small script and
// one stylesheet embedded in the binary: no CDN, no build step. Every
// read and decision goes through the API's handler in-process with the
// bearer token of the browser's cookie, so that roles, authentication and
// the decided_by the log records are the API's own. The timeline and the
// raw JSONL download read the session's stream from the log, after the
// API said who the caller is, with the private surfaces redacted unless
// the caller has the approver role.
//
// Security: the token lives in an HttpOnly, SameSite=Strict cookie and is
// never written into a page, a log line or an event; every non-GET
// request needs a CSRF token (an HMAC of a per-browser random cookie
// under a per-process key) and is refused when Sec-Fetch-Site says
// cross-site; every response carries a strict Content-Security-Policy
// (no inline script, no other origin); all model and tool text is
// escaped by html/template and inserted by the script as text.
package console
