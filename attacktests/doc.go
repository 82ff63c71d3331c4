// Package attacktests attacks the trust boundary of a weft bus: a real
// embedded nats-server with the generated role credentials
// (bus.LoadOrCreateCredentials) listens on a loopback port, a weft node
// runs on it with the node role, and each test opens a second connection
// of a lesser role (bus.Role) that tries to forge what only another role
// may do: an approval, a start or cancel command, a tool return, a worker,
// a worker cancel, an event, the deletion of the log or the leases. Each
// forgery must be refused by the server ("Permissions Violation") and
// change nothing.
//
// Each lesser role is in a NATS account of its own (bus.Role.Account), so
// the tests of jsapi_test.go also make the server publish for them: a
// JetStream API request whose reply subject is the log's ingest subject, a
// live event, a worker cancel or a command must be answered in the role's
// own account and reach no node subscriber, no worker and not the log; a
// consumer delivering to such a subject, the nodes' inbox or another
// role's, and a pool stream that republishes, sources or mirrors, must be
// refused by the JetStream API guard (bus.ServeJSGuard). A round trip of
// the watching connection to the server (a flush) comes after everything
// the server delivered to it before, so "nothing arrived" is checked
// after the attacks were answered, not after a sleep.
//
// The positive tests check that each role can still do its own part.
//
// The package holds only tests.
package attacktests
