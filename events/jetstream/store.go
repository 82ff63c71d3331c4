package jetstream

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/weft-run/weft/bus"
	"github.com/weft-run/weft/events"
)

var (
	_ events.Store     = (*Store)(nil)
	_ events.BlobStore = (*Store)(nil)
)

const (
	// DefaultStreamName is the JetStream stream that holds the log.
	DefaultStreamName = "WEFT_EVENTS"
	// DefaultDuplicateWindow is how long the server remembers event ids for
	// deduplicating re-appends with events.Any (the nats-server default).
	DefaultDuplicateWindow = 2 * time.Minute
	// envelopeReserve is the part of the server's max payload kept for the
	// JSON envelope and the headers; the rest is the Data limit.
	envelopeReserve = 8 << 10
	// maxHeads bounds the cache of stream heads.
	maxHeads = 1 << 16
)

// Option configures a Store.
type Option func(*config) error

type config struct {
	streamName string
	subjects   bus.Subjects
	dupWindow  time.Duration
	replicas   int
	maxData    int
	keys       *events.ChainKeys
	inline     int
	bucket     string
	// set records the options the caller gave explicitly: only those
	// change the configuration of a stream that already exists.
	set map[string]bool
}

// WithStreamName sets the JetStream stream that holds the log (default
// DefaultStreamName). Two stores with different stream names must also use
// different subject roots (WithSubjects): JetStream streams cannot share
// subjects.
func WithStreamName(name string) Option {
	return func(c *config) error {
		if name == "" {
			return errors.New("empty stream name")
		}
		c.streamName = name
		return nil
	}
}

// WithSubjects sets the subject scheme (default bus.Default, rooted at
// "weft").
func WithSubjects(s bus.Subjects) Option {
	return func(c *config) error {
		if s.Root() == "" {
			return errors.New("zero bus.Subjects; use bus.Default or bus.NewSubjects")
		}
		c.subjects = s
		return nil
	}
}

// WithDuplicateWindow sets how long the server remembers event ids to
// recognise a re-append with events.Any after a lost acknowledgement
// (default DefaultDuplicateWindow). Re-appends with an exact expected
// version are recognised at any age. Longer windows cost server memory per
// event appended within the window.
func WithDuplicateWindow(d time.Duration) Option {
	return func(c *config) error {
		if d <= 0 {
			return fmt.Errorf("duplicate window %v: must be positive", d)
		}
		c.dupWindow, c.set["duplicates"] = d, true
		return nil
	}
}

// WithReplicas sets the number of replicas of the stream on a cluster
// (default 1; 3 for a fault-tolerant cluster).
func WithReplicas(n int) Option {
	return func(c *config) error {
		if n < 1 || n > 5 {
			return fmt.Errorf("replicas %d: must be 1 to 5", n)
		}
		c.replicas, c.set["replicas"] = n, true
		return nil
	}
}

// WithMaxDataBytes sets the largest event Data the store accepts (default
// events.DefaultMaxBlobDataBytes, 64 MiB). Data longer than the inline
// limit (WithInlineBytes) is kept in the blob bucket, so it is not bound
// by the server's max payload.
func WithMaxDataBytes(n int) Option {
	return func(c *config) error {
		if n <= 0 {
			return fmt.Errorf("max data bytes %d: must be positive", n)
		}
		c.maxData = n
		return nil
	}
}

// WithChainKeys keys the chain of every appended event with the current
// key of ks (see events.ChainKey): without it, events are unkeyed.
func WithChainKeys(ks *events.ChainKeys) Option {
	return func(c *config) error {
		c.keys = ks
		return nil
	}
}

// WithInlineBytes sets the largest Data kept in the event's own message
// (default events.DefaultInlineBytes, 256 KiB); longer Data goes to the
// blob bucket. The ceiling is the server's max payload less 8 KiB for the
// envelope.
func WithInlineBytes(n int) Option {
	return func(c *config) error {
		if n <= 0 {
			return fmt.Errorf("inline bytes %d: must be positive", n)
		}
		c.inline = n
		return nil
	}
}

// chainKey is the key of new events, nil without chain keys.
func (s *Store) chainKey() *events.ChainKey {
	if s.keys == nil {
		return nil
	}
	return s.keys.Current()
}

// WithBlobBucket sets the Object Store bucket of the store's blobs
// (default BlobBucket of the stream name).
func WithBlobBucket(name string) Option {
	return func(c *config) error {
		if name == "" {
			return errors.New("empty blob bucket name")
		}
		c.bucket = name
		return nil
	}
}

// Store is the JetStream event store. Create it with New. It does not own
// the connection: Close leaves it open.
type Store struct {
	nc       *nats.Conn
	js       jetstream.JetStream
	stream   jetstream.Stream
	name     string
	subjects bus.Subjects
	maxData  int
	maxMsg   int
	keys     *events.ChainKeys // keys the chain when set
	inline   int
	blobs    *Blobs // nil when the bucket could not be opened (blobsErr)
	blobsErr error
	// replicated: the stream has more than one replica (see AppendSteps).
	replicated bool

	mu    sync.Mutex
	heads map[string]head
	// lastSeq is the log's last sequence as this store last saw it (see
	// noteSeq).
	lastSeq atomic.Uint64

	// closing is the store's lifetime: Close cancels it, which ends
	// subscriptions and in-flight reads.
	closing context.Context
	close   context.CancelFunc
}

// head is the last known (version, stream sequence, events.Hash) of a weft
// stream's last event.
type head struct {
	version uint64
	seq     uint64
	hash    string
}

// New returns a store on the connection nc, creating the JetStream stream
// when it does not exist. An existing stream keeps its configuration except
// where the caller asked otherwise (WithReplicas, WithDuplicateWindow) or
// the store needs a setting it lacks (its subjects, direct get, atomic
// publish): a reader such as the weft command line, opening the log of a
// cluster without options, must not shrink a replicated log to one replica.
// It fails if the server does not support atomic batch publish (nats-server
// 2.12 or later) or JetStream.
func New(ctx context.Context, nc *nats.Conn, opts ...Option) (*Store, error) {
	cfg := config{
		streamName: DefaultStreamName,
		subjects:   bus.Default,
		dupWindow:  DefaultDuplicateWindow,
		replicas:   1,
		set:        make(map[string]bool),
	}
	for _, o := range opts {
		if err := o(&cfg); err != nil {
			return nil, fmt.Errorf("jetstream store: %w", err)
		}
	}
	js, err := jetstream.New(nc)
	if err != nil {
		return nil, fmt.Errorf("jetstream store: %w", err)
	}
	stream, err := ensureStream(ctx, js, cfg)
	if err != nil {
		return nil, fmt.Errorf("jetstream store: %w", err)
	}
	maxMsg := int(nc.MaxPayload())
	inline := maxMsg - envelopeReserve
	if inline <= 0 {
		return nil, fmt.Errorf("jetstream store: server max payload %d is too small", maxMsg)
	}
	inline = min(inline, events.DefaultInlineBytes)
	if cfg.inline > 0 {
		inline = min(cfg.inline, maxMsg-envelopeReserve)
	}
	maxData := events.DefaultMaxBlobDataBytes
	if cfg.maxData > 0 {
		maxData = cfg.maxData
	}
	bucket := cfg.bucket
	if bucket == "" {
		bucket = BlobBucket(cfg.streamName)
	}
	// A process whose credentials may read the log but not create the
	// bucket (a reader, before any node created it) opens the store
	// without it: large appends and reads of events by reference then
	// fail, naming why (see Store.PutBlob and Store.GetBlob).
	blobs, blobsErr := NewBlobs(ctx, js, bucket, cfg.replicas)
	closing, cancel := context.WithCancel(context.Background())
	return &Store{
		nc:       nc,
		js:       js,
		stream:   stream,
		name:     cfg.streamName,
		subjects: cfg.subjects,
		maxData:  maxData,
		maxMsg:   maxMsg,
		keys:     cfg.keys,
		inline:   inline,
		blobs:    blobs,
		blobsErr: blobsErr,
		heads:    make(map[string]head),
		closing:  closing,
		close:    cancel,

		replicated: stream.CachedInfo().Config.Replicas > 1,
	}, nil
}

// ensureStream creates the stream cfg describes, or brings an existing one
// to what cfg explicitly asks for and the store needs, leaving the rest of
// its configuration (replicas, duplicate window, limits) as it is.
func ensureStream(ctx context.Context, js jetstream.JetStream, cfg config) (jetstream.Stream, error) {
	want := jetstream.StreamConfig{
		Name:               cfg.streamName,
		Description:        "weft event log",
		Subjects:           []string{cfg.subjects.AllLogIngest()},
		SubjectTransform:   &jetstream.SubjectTransformConfig{Source: cfg.subjects.AllLogIngest(), Destination: cfg.subjects.AllEvents()},
		Retention:          jetstream.LimitsPolicy,
		Storage:            jetstream.FileStorage,
		Replicas:           cfg.replicas,
		Duplicates:         cfg.dupWindow,
		AllowDirect:        true,
		AllowAtomicPublish: true,
		DenyDelete:         true,
		DenyPurge:          true,
	}
	stream, err := js.Stream(ctx, cfg.streamName)
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		stream, err = js.CreateStream(ctx, want)
		if errors.Is(err, jetstream.ErrStreamNameAlreadyInUse) {
			stream, err = js.Stream(ctx, cfg.streamName) // another process created it first
		} else if err != nil {
			return nil, fmt.Errorf("create stream %q: %w", cfg.streamName, err)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("stream %q: %w", cfg.streamName, err)
	}
	have := stream.CachedInfo().Config
	update := have
	update.Subjects, update.SubjectTransform = want.Subjects, want.SubjectTransform
	update.AllowDirect, update.AllowAtomicPublish = true, true
	update.DenyDelete, update.DenyPurge = true, true
	if cfg.set["replicas"] {
		update.Replicas = cfg.replicas
	}
	if cfg.set["duplicates"] {
		update.Duplicates = cfg.dupWindow
	}
	if slices.Equal(update.Subjects, have.Subjects) && sameTransform(update.SubjectTransform, have.SubjectTransform) && update.AllowDirect == have.AllowDirect &&
		update.AllowAtomicPublish == have.AllowAtomicPublish && update.DenyDelete == have.DenyDelete &&
		update.DenyPurge == have.DenyPurge && update.Replicas == have.Replicas && update.Duplicates == have.Duplicates {
		return stream, nil
	}
	stream, err = js.UpdateStream(ctx, update)
	if err != nil {
		return nil, fmt.Errorf("update stream %q: %w", cfg.streamName, err)
	}
	return stream, nil
}

// sameTransform reports whether two subject transforms are the same.
func sameTransform(a, b *jetstream.SubjectTransformConfig) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

// MaxDataBytes returns the largest event Data the store accepts.
func (s *Store) MaxDataBytes() int { return s.maxData }

// InlineBytes returns the largest Data the store keeps in an event's own
// message; longer Data goes to the blob bucket.
func (s *Store) InlineBytes() int { return s.inline }

// StreamName returns the JetStream stream that holds the log.
func (s *Store) StreamName() string { return s.name }

// Close implements events.Store: it ends live subscriptions with
// events.ErrClosed, and every later call fails with ErrClosed. The
// connection stays open. Close is idempotent.
func (s *Store) Close() error {
	s.close()
	return nil
}

func (s *Store) closed() bool { return s.closing.Err() != nil }

// cachedHead returns the cached head of stream.
func (s *Store) cachedHead(stream string) (head, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	h, ok := s.heads[stream]
	return h, ok
}

// setHead records h as the head of stream unless a later head is known.
func (s *Store) setHead(stream string, h head) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if old, ok := s.heads[stream]; ok && old.seq >= h.seq {
		return
	}
	if len(s.heads) >= maxHeads {
		clear(s.heads)
	}
	s.heads[stream] = h
}

// NewStream implements events.NewStreamer: the head of stream is taken
// to be empty (version 0) unless one is cached; the server's fence on the
// first append (Nats-Expected-Last-Subject-Sequence 0 for the stream's
// subjects) refuses it if the stream has messages after all, and the store
// then reads the head as after any refused publish.
func (s *Store) NewStream(stream string) { s.setHead(stream, head{}) }

// dropHead forgets the cached head of stream.
func (s *Store) dropHead(stream string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.heads, stream)
}

// fetchHead reads the last event of stream from the server.
func (s *Store) fetchHead(ctx context.Context, filter string) (head, error) {
	msg, err := s.stream.GetLastMsgForSubject(ctx, filter)
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		// No event yet, one appended since, or a last one the server
		// counts but cannot read (a damaged file store).
		switch cerr := s.checkEmpty(ctx, filter); {
		case cerr == nil:
			return head{}, nil
		case !errors.Is(cerr, errRetryHead):
			return head{}, cerr
		}
		msg, err = s.stream.GetLastMsgForSubject(ctx, filter)
	}
	if err != nil {
		return head{}, fmt.Errorf("read stream head: %w", err)
	}
	ev, err := s.decode(msg.Subject, msg.Data, msg.Sequence)
	if err != nil {
		return head{}, err
	}
	return head{version: ev.Version, seq: msg.Sequence, hash: events.Hash(ev)}, nil
}
