package bus

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Role is what a connection to a weft bus may do. The set is closed: the
// constants below are every role (Roles lists them).
//
// The permissions of each role follow from the subject scheme (subjects.go,
// node.go) and the worker protocol (docs/worker-protocol.md):
//
//   - node: everything the runtime needs (no restriction). Only nodes
//     append events (<root>.log.>, the subjects the event stream stores)
//     and publish their live copies (<root>.evt.>) and the live model
//     output (<root>.delta.>), forward commands and local tool calls
//     (<root>.node.>), send remote calls and cancels (<root>.worker.call.>,
//     <root>.worker.cancel.>, <root>.worker.queue.>), and call the
//     JetStream API of the event log and the lease bucket beyond reads.
//   - worker: subscribes to its call subjects (in the queue group
//     weft-workers only), to cancels and to describe requests, and
//     publishes reports, returns and descriptions on the nodes' reply
//     subjects (_INBOX.>); a pool worker also creates, reads and pulls from
//     the pool stream's consumers (and creates that stream). Nothing on
//     <root>.evt.>, <root>.delta.>, <root>.log.>, <root>.cmd.>, <root>.node.>, or the
//     JetStream API of the event log or the leases.
//   - reader: reads the log (stream info, direct gets, ordered consumers on
//     the event stream) and subscribes to live events and live model output. No publish to any
//     weft subject, no JetStream call that writes or deletes.
//   - approver: a reader that may also send resume commands (the
//     decisions: approve, deny, complete, fail).
//   - operator: an approver that may also start and cancel runs.
//
// Every role but node replies only on its own inbox prefix (InboxPrefix), so
// no lesser connection sees the replies meant for another role. The
// permissions are the inner layer: each lesser role is also in a NATS
// account of its own (Account, accounts.go), so that what the server
// publishes on its behalf (a JetStream API answer, a consumer's delivery)
// stays in that account.
type Role string

// The roles, from most to least trusted.
const (
	RoleNode     Role = "node"
	RoleOperator Role = "operator"
	RoleApprover Role = "approver"
	RoleReader   Role = "reader"
	RoleWorker   Role = "worker"
)

// Roles returns every role, node first.
func Roles() []Role {
	return []Role{RoleNode, RoleOperator, RoleApprover, RoleReader, RoleWorker}
}

// ErrUnknownRole is matched (errors.Is) by the error of ParseRole for a
// name that is not a role.
var ErrUnknownRole = errors.New("bus: unknown role")

// ParseRole returns the role called name ("node", "operator", "approver",
// "reader" or "worker"). Any other name, including a different case, is an
// error wrapping ErrUnknownRole that lists the roles.
func ParseRole(name string) (Role, error) {
	r := Role(name)
	if slices.Contains(Roles(), r) {
		return r, nil
	}
	names := make([]string, 0, 5)
	for _, r := range Roles() {
		names = append(names, string(r))
	}
	return "", fmt.Errorf("%w %q (known: %s)", ErrUnknownRole, name, strings.Join(names, ", "))
}

// InboxPrefix is the prefix of the reply subjects of a connection of role r:
// "_INBOX" (the NATS default) for node, "_INBOX_<role>" for the others.
// A connection of a lesser role must use it (nats.CustomInboxPrefix; bus
// Connect's WithRole sets it): it may subscribe to nothing else.
func (r Role) InboxPrefix() string {
	if r == RoleNode {
		return "_INBOX"
	}
	return "_INBOX_" + string(r)
}

// The default JetStream names the permissions protect (they equal
// jetstream.DefaultStreamName, jetstream.BlobBucket(DefaultEventStream),
// actors.DefaultLeaseBucket and protocol.WorkerQueueStream(Default); a test
// checks it).
const (
	DefaultEventStream = "WEFT_EVENTS"
	DefaultBlobBucket  = DefaultEventStream + "_BLOBS"
	DefaultLeaseBucket = "weft_leases"
)

// Layout names what the role permissions are written for: the subject
// scheme, the event log's JetStream stream, its blob bucket (the Object
// Store of large event data), the lease bucket and the stream of the
// worker pools. DefaultLayout is weft's default deployment.
type Layout struct {
	Subjects          Subjects
	EventStream       string
	BlobBucket        string
	LeaseBucket       string
	WorkerQueueStream string
}

// DefaultLayout returns the layout of a default deployment: root "weft",
// stream WEFT_EVENTS, bucket weft_leases, pool stream WEFT_WORKER_QUEUE.
func DefaultLayout() Layout {
	return Layout{Subjects: Default, EventStream: DefaultEventStream, BlobBucket: DefaultBlobBucket, LeaseBucket: DefaultLeaseBucket, WorkerQueueStream: "WEFT_WORKER_QUEUE"}
}

// Permissions are the subjects a role may publish and subscribe to, as NATS
// authorization understands them (a deny entry wins over an allow entry).
// Unrestricted (node) has no lists: everything is allowed.
type Permissions struct {
	Unrestricted   bool
	PublishAllow   []string
	PublishDeny    []string
	SubscribeAllow []string
	SubscribeDeny  []string
}

// jsAPI is the JetStream API prefix.
const jsAPI = "$JS.API."

// Permissions returns the permissions of role r in layout l. It panics on a
// role that is not one of the constants (use ParseRole on input).
func (l Layout) Permissions(r Role) Permissions {
	root := l.Subjects.Root()
	ev, kv, q, obj := l.EventStream, "KV_"+l.LeaseBucket, l.WorkerQueueStream, "OBJ_"+l.BlobBucket
	// Nobody but node writes the log or the leases or calls the API that
	// deletes, purges or reconfigures them; the deny entries hold even if
	// an allow entry is ever widened.
	deny := []string{
		root + ".evt.>",
		root + ".delta.>",
		root + ".log.>",
		root + ".node.>",
		"$KV." + l.LeaseBucket + ".>",
	}
	for _, s := range []string{ev, kv, obj} {
		deny = append(deny,
			jsAPI+"STREAM.CREATE."+s, jsAPI+"STREAM.UPDATE."+s, jsAPI+"STREAM.DELETE."+s,
			jsAPI+"STREAM.PURGE."+s, jsAPI+"STREAM.MSG.DELETE."+s,
			jsAPI+"STREAM.SNAPSHOT."+s, jsAPI+"STREAM.RESTORE."+s,
		)
	}
	// Reading the log: stream info, direct gets (also batched and by last
	// subject), message gets, and the ephemeral ordered consumers that
	// scan it (create, info, pull, delete).
	readLog := []string{
		jsAPI + "INFO",
		jsAPI + "STREAM.INFO." + ev,
		jsAPI + "STREAM.MSG.GET." + ev,
		jsAPI + "DIRECT.GET." + ev,
		jsAPI + "DIRECT.GET." + ev + ".>",
		jsAPI + "CONSUMER.CREATE." + ev + ".>",
		jsAPI + "CONSUMER.INFO." + ev + ".*",
		jsAPI + "CONSUMER.MSG.NEXT." + ev + ".*",
		jsAPI + "CONSUMER.DELETE." + ev + ".*",
	}
	// Reading the blob bucket (the large data of the log's events, as
	// the Object Store reads an object: stream info, the object's meta by
	// direct get, its chunks through an ordered push consumer with flow
	// control, deleted after).
	readBlobs := []string{
		jsAPI + "STREAM.INFO." + obj,
		jsAPI + "STREAM.MSG.GET." + obj,
		jsAPI + "DIRECT.GET." + obj,
		jsAPI + "DIRECT.GET." + obj + ".>",
		jsAPI + "CONSUMER.CREATE." + obj,
		jsAPI + "CONSUMER.CREATE." + obj + ".>",
		jsAPI + "CONSUMER.INFO." + obj + ".*",
		jsAPI + "CONSUMER.DELETE." + obj + ".*",
		"$JS.FC." + obj + ".>",
	}
	readLog = append(readLog, readBlobs...)
	inbox := r.InboxPrefix() + ".>"
	switch r {
	case RoleNode:
		return Permissions{Unrestricted: true}
	case RoleReader, RoleApprover, RoleOperator:
		pub := slices.Clone(readLog)
		if r != RoleReader {
			pub = append(pub, root+".cmd.session.*.resume")
		}
		if r == RoleOperator {
			pub = append(pub, root+".cmd.session.*.start", root+".cmd.session.*.cancel")
		}
		return Permissions{
			PublishAllow:   pub,
			PublishDeny:    deny,
			SubscribeAllow: []string{root + ".evt.>", root + ".delta.>", inbox},
		}
	case RoleWorker:
		return Permissions{
			PublishAllow: append([]string{
				// Reports, returns and descriptions go to the nodes'
				// reply subjects.
				RoleNode.InboxPrefix() + ".>",
				// A pool worker: the pool stream and its consumers.
				jsAPI + "INFO",
				jsAPI + "STREAM.INFO." + q,
				jsAPI + "STREAM.CREATE." + q,
				jsAPI + "CONSUMER.CREATE." + q + ".>",
				jsAPI + "CONSUMER.DURABLE.CREATE." + q + ".>",
				jsAPI + "CONSUMER.INFO." + q + ".*",
				jsAPI + "CONSUMER.MSG.NEXT." + q + ".*",
				"$JS.ACK." + q + ".>",
				// Large arguments and results by reference: the blob
				// bucket's reads, and its chunk and meta subjects (no
				// purge or delete: a worker cannot remove a blob, and
				// content it rewrites fails its SHA-256 check).
				"$O." + l.BlobBucket + ".C.>",
				"$O." + l.BlobBucket + ".M.>",
			}, readBlobs...),
			PublishDeny: append(deny, root+".cmd.>", root+".worker.>"),
			SubscribeAllow: []string{
				root + ".worker.call.> " + workerQueueGroup,
				root + ".worker.cancel.*.*.*",
				root + ".worker.describe",
				inbox,
			},
			SubscribeDeny: []string{root + ".evt.>", root + ".delta.>", root + ".cmd.>", root + ".node.>"},
		}
	}
	panic(fmt.Sprintf("bus: permissions of unknown role %q", string(r)))
}

// workerQueueGroup is the queue group of the worker call subjects
// (actors.WorkerQueueGroup; a test checks they agree).
const workerQueueGroup = "weft-workers"
