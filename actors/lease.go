package actors

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/weft-run/weft/bus"
)

const (
	// DefaultLeaseBucket is the JetStream KV bucket that holds the session
	// leases.
	DefaultLeaseBucket = "weft_leases"
	// DefaultLeaseTTL is how long a lease lives without renewal.
	DefaultLeaseTTL = 10 * time.Second
	// MinLeaseTTL is the shortest lease TTL NewLeases accepts.
	MinLeaseTTL = 200 * time.Millisecond
	// CommandQueueGroup is the NATS queue group hosts with leases serve
	// weft.cmd.session.*.* in: each command reaches one host of the
	// cluster, which acts on it or forwards it to the session's owner.
	CommandQueueGroup = "weft-cmd"
)

// ErrBadLeaseConfig is returned by NewLeases for an invalid LeaseConfig.
var ErrBadLeaseConfig = errors.New("actors: bad lease configuration")

// LeaseConfig configures Leases.
type LeaseConfig struct {
	// NodeID names this node in the leases it holds; empty picks a random
	// one. It must be a NATS subject token (bus.ValidToken): the node's
	// forwarded commands arrive on a subject that contains it.
	NodeID string
	// Bucket is the KV bucket; empty means DefaultLeaseBucket.
	Bucket string
	// TTL is how long a lease lives without renewal (the bucket's max age:
	// the server's clock expires it, not the nodes'); zero means
	// DefaultLeaseTTL. Every node of a cluster must use the same TTL: the
	// last node to start sets the bucket's.
	TTL time.Duration
	// Replicas is the number of replicas of the bucket (default 1).
	Replicas int
}

// Leases is a node's view of the session leases: at most one node drives
// a session at a time, the one holding its lease. A lease is a key of a
// JetStream KV bucket (the session id, base64url-encoded) whose value names
// the owner node; it is created if absent and renewed with the revision
// the owner last wrote (compare-and-set), and it expires TTL after its last
// write. See "Ownership" in the package doc.
type Leases struct {
	kv   jetstream.KeyValue
	node string
	ttl  time.Duration
	// markers is set when the bucket has limit markers (LimitMarkerTTL):
	// the server writes a delete marker when a lease expires, which the
	// takeover watcher hears. Without them the watcher times the leases
	// itself (see WatchLeases).
	markers bool

	mu   sync.Mutex
	held map[string]uint64 // session id → revision this node last wrote
}

// leaseValue is the JSON value of a lease key.
type leaseValue struct {
	Node string `json:"node"`
}

// NewLeases opens (creating or updating) the lease bucket on nc's
// JetStream. It gives the bucket limit markers (KeyValueConfig.LimitMarkerTTL:
// the server writes a delete marker when a lease expires, which
// Host.WatchLeases hears) when the server accepts them (nats-server 2.11
// and later); otherwise it opens the bucket without, and WatchLeases times
// the leases itself. Once a bucket has limit markers the server cannot
// remove them: a node that opens it without (an older weft) is refused.
func NewLeases(ctx context.Context, nc *nats.Conn, cfg LeaseConfig) (*Leases, error) {
	if nc == nil {
		return nil, fmt.Errorf("%w: no NATS connection", ErrBadLeaseConfig)
	}
	if cfg.NodeID == "" {
		var b [8]byte
		_, _ = rand.Read(b[:])
		cfg.NodeID = "node-" + hex.EncodeToString(b[:])
	}
	if !bus.ValidToken(cfg.NodeID) {
		return nil, fmt.Errorf("%w: node id %q is not a subject token", ErrBadLeaseConfig, cfg.NodeID)
	}
	if cfg.Bucket == "" {
		cfg.Bucket = DefaultLeaseBucket
	}
	if cfg.TTL == 0 {
		cfg.TTL = DefaultLeaseTTL
	}
	if cfg.TTL < MinLeaseTTL {
		return nil, fmt.Errorf("%w: lease TTL %v is below %v", ErrBadLeaseConfig, cfg.TTL, MinLeaseTTL)
	}
	if cfg.Replicas == 0 {
		cfg.Replicas = 1
	}
	if cfg.Replicas < 1 || cfg.Replicas > 5 {
		return nil, fmt.Errorf("%w: replicas %d: must be 1 to 5", ErrBadLeaseConfig, cfg.Replicas)
	}
	js, err := jetstream.New(nc)
	if err != nil {
		return nil, fmt.Errorf("leases: %w", err)
	}
	return openLeases(ctx, js, cfg, true)
}

// openLeases opens (creating or updating) the lease bucket. With markers it
// asks for limit markers (the server then reports an expired lease to
// watchers with a delete marker); if the server refuses them (before
// nats-server 2.11, or a bucket it will not update), it opens the bucket
// without.
func openLeases(ctx context.Context, js jetstream.JetStream, cfg LeaseConfig, markers bool) (*Leases, error) {
	kcfg := jetstream.KeyValueConfig{
		Bucket:      cfg.Bucket,
		Description: "weft session leases",
		History:     1,
		TTL:         cfg.TTL,
		Replicas:    cfg.Replicas,
		Storage:     jetstream.FileStorage,
	}
	if markers {
		with := kcfg
		with.LimitMarkerTTL = markerTTL(cfg.TTL)
		kv, err := js.CreateOrUpdateKeyValue(ctx, with)
		if err == nil {
			return &Leases{kv: kv, node: cfg.NodeID, ttl: cfg.TTL, markers: true, held: map[string]uint64{}}, nil
		}
		// Try without: the error below is the one that says why, if the
		// bucket cannot be opened at all.
		if kv, err2 := js.CreateOrUpdateKeyValue(ctx, kcfg); err2 == nil {
			return &Leases{kv: kv, node: cfg.NodeID, ttl: cfg.TTL, held: map[string]uint64{}}, nil
		}
		return nil, fmt.Errorf("leases: bucket %q: %w", cfg.Bucket, err)
	}
	kv, err := js.CreateOrUpdateKeyValue(ctx, kcfg)
	if err != nil {
		return nil, fmt.Errorf("leases: bucket %q: %w", cfg.Bucket, err)
	}
	return &Leases{kv: kv, node: cfg.NodeID, ttl: cfg.TTL, held: map[string]uint64{}}, nil
}

// markerTTL is how long the delete marker of an expired lease stays in the
// bucket: a TTL, and at least the one second the server accepts.
func markerTTL(ttl time.Duration) time.Duration {
	return max(ttl, time.Second)
}

// Node returns this node's id.
func (l *Leases) Node() string { return l.node }

// TTL returns the lease TTL.
func (l *Leases) TTL() time.Duration { return l.ttl }

func leaseKey(session string) string { return base64.RawURLEncoding.EncodeToString([]byte(session)) }

// sessionOfKey returns the session id of a lease key.
func sessionOfKey(key string) (string, error) {
	b, err := base64.RawURLEncoding.DecodeString(key)
	if err != nil {
		return "", fmt.Errorf("lease key %q: %w", key, err)
	}
	return string(b), nil
}

// Acquire takes the lease of session for this node, or renews it when
// this node holds it already. It returns the owner: this node's id when it
// holds the lease, another node's when that node does.
func (l *Leases) Acquire(ctx context.Context, session string) (string, error) {
	key := leaseKey(session)
	val, _ := json.Marshal(leaseValue{Node: l.node})
	for range 3 {
		e, err := l.kv.Get(ctx, key)
		switch {
		case errors.Is(err, jetstream.ErrKeyNotFound):
			rev, err := l.kv.Create(ctx, key, val)
			if errors.Is(err, jetstream.ErrKeyExists) {
				continue // another node created it first: look again
			}
			if err != nil {
				return "", fmt.Errorf("acquire lease of %q: %w", session, err)
			}
			l.hold(session, rev)
			return l.node, nil
		case err != nil:
			return "", fmt.Errorf("read lease of %q: %w", session, err)
		}
		var v leaseValue
		if err := json.Unmarshal(e.Value(), &v); err != nil || v.Node == "" {
			return "", fmt.Errorf("lease of %q: bad value %q", session, e.Value())
		}
		if v.Node != l.node {
			l.drop(session)
			return v.Node, nil
		}
		rev, err := l.kv.Update(ctx, key, val, e.Revision())
		if err != nil {
			continue // it moved (expired, or taken) in between: look again
		}
		l.hold(session, rev)
		return l.node, nil
	}
	return "", fmt.Errorf("acquire lease of %q: it keeps changing hands", session)
}

// Renew extends the lease of session this node holds, with the revision it
// last wrote. If the lease expired and nobody took it, Renew takes it
// again. It returns false when another node holds it now (or this node
// never held it).
func (l *Leases) Renew(ctx context.Context, session string) (bool, error) {
	l.mu.Lock()
	rev, ok := l.held[session]
	l.mu.Unlock()
	if !ok {
		return false, nil
	}
	val, _ := json.Marshal(leaseValue{Node: l.node})
	key := leaseKey(session)
	nrev, err := l.kv.Update(ctx, key, val, rev)
	if err == nil {
		l.hold(session, nrev)
		return true, nil
	}
	owner, aerr := l.Acquire(ctx, session)
	if aerr != nil {
		return false, aerr
	}
	return owner == l.node, nil
}

// Release gives up the lease of session if this node holds it (a clean
// stop): another node may take it at once instead of after the TTL.
func (l *Leases) Release(ctx context.Context, session string) error {
	l.mu.Lock()
	rev, ok := l.held[session]
	delete(l.held, session)
	l.mu.Unlock()
	if !ok {
		return nil
	}
	err := l.kv.Delete(ctx, leaseKey(session), jetstream.LastRevision(rev))
	if err != nil && !isWrongSequence(err) {
		return fmt.Errorf("release lease of %q: %w", session, err)
	}
	return nil
}

// Owner returns the node holding the lease of session, "" when none does.
func (l *Leases) Owner(ctx context.Context, session string) (string, error) {
	e, err := l.kv.Get(ctx, leaseKey(session))
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	var v leaseValue
	if err := json.Unmarshal(e.Value(), &v); err != nil {
		return "", fmt.Errorf("lease of %q: bad value %q", session, e.Value())
	}
	return v.Node, nil
}

// Held returns the sessions whose lease this node holds (as far as it
// knows: a lease it failed to renew may have moved).
func (l *Leases) Held() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]string, 0, len(l.held))
	for s := range l.held {
		out = append(out, s)
	}
	return out
}

// Forget stops renewing session's lease without releasing it (the lease
// expires after its TTL).
func (l *Leases) Forget(session string) { l.drop(session) }

func (l *Leases) hold(session string, rev uint64) {
	l.mu.Lock()
	l.held[session] = rev
	l.mu.Unlock()
}

func (l *Leases) drop(session string) {
	l.mu.Lock()
	delete(l.held, session)
	l.mu.Unlock()
}

func isWrongSequence(err error) bool {
	var apiErr *jetstream.APIError
	return errors.As(err, &apiErr) && apiErr.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequence
}
