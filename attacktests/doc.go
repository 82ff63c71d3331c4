// Package attacktests attacks the trust boundary of a weft bus: a real
// embedded nats-server with the generated role credentials
// (bus.LoadOrCreateCredentials) listens on a loopback port, a weft node
// runs on it with the node role, and each test opens a second connection
// of a lesser role (bus.Role) that tries to forge what only another role
// may do: an approval, a start or cancel command, a tool return, a worker,
// a worker cancel, an event, the deletion of the log or the leases. Each
// forgery must be refused by the server ("Permissions Violation") and
// change nothing. The positive tests check that each role can still do
// its own part.
//
// The package holds only tests.
package attacktests
