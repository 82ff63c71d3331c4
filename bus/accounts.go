package bus

import (
	"slices"
	"strings"
)

// NodeAccount is the NATS account of the node role in the configuration of
// an external cluster (NATSAccounts): the account that holds the event
// log, the blob bucket, the leases and the worker pools. The embedded
// server keeps it in its global account instead, so that a data
// directory written before the accounts keeps its streams.
const NodeAccount = "WEFT"

// Account returns the NATS account of role r: NodeAccount for node,
// "WEFT_<ROLE>" (WEFT_READER, …) for each lesser role. Every lesser role
// has an account of its own, so what the server delivers in it (the
// answer of a JetStream API request, whatever reply subject the request
// named) reaches only connections of that role.
func (r Role) Account() string {
	if r == RoleNode {
		return NodeAccount
	}
	return NodeAccount + "_" + strings.ToUpper(string(r))
}

// Import is one subject that crosses between the node account and the
// account of a lesser role. A service import carries requests from the
// importer to the exporter and routes each answer back to the reply
// subject in the importer's account; a stream import carries messages,
// with their reply subjects, from the exporter into the importer.
type Import struct {
	// Service is set for a service import, false for a stream.
	Service bool
	// Importer and Exporter are the two accounts (Role.Account names).
	Importer, Exporter string
	// Subject is the subject in the exporter's account.
	Subject string
	// To is the subject in the importer's account when it differs from
	// Subject (a service import mapped to another subject: the JetStream
	// API requests that the API guard checks, see GuardSubject).
	To string
	// Streamed is set for a service whose one request is answered by many
	// messages (a pull request, a batched direct get).
	Streamed bool
}

// Local is the subject of the import in the importer's account.
func (i Import) Local() string {
	if i.To != "" {
		return i.To
	}
	return i.Subject
}

// Imports returns every subject that crosses between the node account and
// the account of the lesser role r, derived from r's permissions, so that
// the account exposes exactly what the role may use:
//
//   - each JetStream subject r may publish ($JS.API.…, $JS.ACK.…,
//     $JS.FC.…, $O.…) is a service of the node account: the request
//     reaches the node's streams and the answer comes back into r's
//     account, on the reply subject r named, where no weft component
//     listens or ingests. The API calls whose body names a subject the
//     server will publish on (a consumer's deliver subject, a stream's
//     republish or sources) go to the API guard first (GuardSubject);
//   - each command r may send (<root>.cmd.…) and the nodes' reply subjects
//     (_INBOX.>, for a worker's reports) are a stream from r's account
//     into the node account, their reply subjects kept;
//   - each subject r may subscribe to (live events, worker calls, cancels,
//     describe requests, r's own inbox) is a stream from the node account.
//
// r must not be node (it panics, as Permissions does on an unknown role).
func (l Layout) Imports(r Role) []Import {
	if r == RoleNode {
		panic("bus: the node account imports from the lesser roles' accounts; ask for their imports")
	}
	node, own := RoleNode.Account(), r.Account()
	p := l.Permissions(r)
	var out []Import
	for _, s := range p.PublishAllow {
		switch {
		case strings.HasPrefix(s, "$JS.") || strings.HasPrefix(s, "$O."):
			im := Import{Service: true, Importer: own, Exporter: node, Subject: s}
			if guarded(s) {
				im.Subject, im.To = GuardSubject(r, s), s
			}
			im.Streamed = strings.HasPrefix(s, jsAPI+"CONSUMER.MSG.NEXT.") || strings.HasPrefix(s, jsAPI+"DIRECT.GET.")
			out = append(out, im)
		default: // commands, and the nodes' inboxes
			out = append(out, Import{Importer: node, Exporter: own, Subject: s})
		}
	}
	for _, s := range p.SubscribeAllow {
		s, _, _ = strings.Cut(s, " ") // a queue subscription's subject
		out = append(out, Import{Importer: own, Exporter: node, Subject: s})
	}
	return out
}

// AllImports returns the imports of every lesser role, in Roles order.
func (l Layout) AllImports() []Import {
	var out []Import
	for _, r := range Roles() {
		if r != RoleNode {
			out = append(out, l.Imports(r)...)
		}
	}
	return out
}

// Export is one subject an account offers to the accounts that import it.
type Export struct {
	Service  bool
	Subject  string
	Streamed bool
	// Accounts are the importers, sorted.
	Accounts []string
}

// exportsOf returns the exports of account acc that imports need, one per
// subject and kind, in the order of their first import.
func exportsOf(acc string, imports []Import) []Export {
	var out []Export
	for _, im := range imports {
		if im.Exporter != acc {
			continue
		}
		i := slices.IndexFunc(out, func(e Export) bool { return e.Service == im.Service && e.Subject == im.Subject })
		if i < 0 {
			out = append(out, Export{Service: im.Service, Subject: im.Subject, Streamed: im.Streamed})
			i = len(out) - 1
		}
		if !slices.Contains(out[i].Accounts, im.Importer) {
			out[i].Accounts = append(out[i].Accounts, im.Importer)
			slices.Sort(out[i].Accounts)
		}
	}
	return out
}

// importsOf returns the imports into account acc.
func importsOf(acc string, imports []Import) []Import {
	var out []Import
	for _, im := range imports {
		if im.Importer == acc {
			out = append(out, im)
		}
	}
	return out
}
