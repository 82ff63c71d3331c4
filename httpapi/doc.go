// Package httpapi is the HTTP API of a weft node: JSON under /v1,
// described by the OpenAPI 3.1 document openapi.yaml (OpenAPI), on the
// standard library's router.
//
// It starts runs in new or existing sessions (an Idempotency-Key makes a
// retried start return the run the first one started), shows sessions
// (the archive view of package projections), lists them with filters,
// cancels runs, lists the HITL queue and decides its items (approve with
// reviewed arguments, deny, complete, fail, answer an elicitation), and
// streams events as
// Server-Sent Events: a session's, from its log then live, with id: each
// event's log position so that a client reconnecting with Last-Event-ID
// gets exactly the events it missed, plus the live model output as
// "event: model.delta", delivered in one order with the events (a run's
// last deltas come before its run.completed); and every stream's,
// filtered by type and subject. POST /v1/agents/reload reloads the node's
// agents (Config.Reload; SetAgents swaps the agents runs start with).
// /healthz and /readyz are the probes of a deployment.
//
// Callers present bearer tokens (Tokens: a list of principal, roles and
// token or its SHA-256) mapped to a principal with roles: viewer (read),
// operator (start and cancel runs), approver (decide); every role reads.
// A decision records the principal as its by, marked authenticated in
// approval.decided and deferred.resolved. Without tokens the API listens
// on loopback only (Listen refuses other addresses) and every caller is
// LocalPrincipal. TLS and mutual TLS are optional (TLSConfig); CORS is off
// unless Config.CORSOrigins names origins.
package httpapi
