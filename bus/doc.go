// Package bus is weft's NATS layer: the embedded nats-server, connections to
// an external NATS cluster, and the naming of every subject weft uses.
//
// # Embedded or external
//
// A single machine runs the real nats-server inside the process
// (StartServer): JetStream keeps its file store in a data directory the
// user can see, clients connect in-process without a network port, the
// server installs no signal handlers and never exits the process. A
// cluster points every process at an external NATS URL instead (Connect);
// the code above this package is the same in both cases.
//
// # Subjects
//
// All subject names are built in subjects.go and node.go and nowhere else:
//
//	weft.evt.<category>.<id>.<type tokens>   an event of a stream
//	weft.cmd.session.<id>.<verb>             a command to a session actor
//	weft.node.<node>.cmd.session.<id>.<verb> a command forwarded to the owner node
//	weft.node.<node>.tool.<name>             unused: local tool calls run in the
//	                                         process that prepared the run (NodeTool)
//
// Identifiers that are not valid subject tokens are escaped (EscapeToken),
// never passed through; see EscapeToken for the exact rules.
//
// # Roles
//
// Who may publish and subscribe to what is a Role (node, operator,
// approver, reader, worker) with the permissions Layout.Permissions derives
// from the subject scheme (roles.go). A server that listens admits the nkey
// users of Credentials (LoadOrCreateCredentials: one seed file per role,
// mode 0600) with those permissions, every lesser role in a NATS account of
// its own that imports only what it uses from the node account
// (accounts.go, Layout.Imports), and runs the JetStream API guard those
// accounts create consumers through (jsguard.go, ServeJSGuard);
// Layout.NATSAccounts writes the same accounts for the configuration of an
// external cluster. Clients
// authenticate with WithRoleCredentials (or WithNKeySeedFile and WithRole).
// A listener on a non-loopback address needs TLS (ServerConfig.TLS) or an
// explicit InsecureListen.
package bus
