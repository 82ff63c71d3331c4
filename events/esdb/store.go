package esdb

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/EventStore/EventStore-Client-Go/v4/esdb"

	"github.com/weft-run/weft/events"
)

var _ events.Store = (*Store)(nil)

// Store is an events.Store over an EventStoreDB client. It is safe for
// concurrent use.
type Store struct {
	client  *esdb.Client
	owned   bool // Close closes client
	maxData int
	prefix  string
	keys    *events.ChainKeys

	// life is the store's lifetime: Close cancels it, which ends live
	// subscriptions with ErrClosed.
	life      context.Context
	cancel    context.CancelFunc
	closeOnce sync.Once
}

// Option configures a Store.
type Option func(*config) error

type config struct {
	maxData int
	prefix  string
	keys    *events.ChainKeys
}

// WithChainKeys keys the chain of every appended event with the current
// key of ks (see events.ChainKey): without it, events are unkeyed.
func WithChainKeys(ks *events.ChainKeys) Option {
	return func(c *config) error {
		c.keys = ks
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

// WithMaxDataBytes sets the largest event Data Append accepts; n <= 0 means
// events.DefaultMaxDataBytes. The server's own append size limit still
// applies.
func WithMaxDataBytes(n int) Option {
	return func(c *config) error {
		c.maxData = n
		return nil
	}
}

// WithStreamPrefix scopes the store to the EventStoreDB streams whose names
// start with prefix: stream s of the port is stream prefix+s in the
// database, and ReadAll and Subscribe see only those streams (with the
// prefix removed). Use it to share a database between stores or with other
// applications. The prefix must be a valid stream name that does not start
// with "$".
func WithStreamPrefix(prefix string) Option {
	return func(c *config) error {
		if err := events.ValidateStream(prefix); err != nil {
			return fmt.Errorf("stream prefix: %w", err)
		}
		if strings.HasPrefix(prefix, "$") {
			return fmt.Errorf("stream prefix %q: %w: starts with $ (system streams)", prefix, events.ErrInvalidStream)
		}
		c.prefix = prefix
		return nil
	}
}

// New returns a store connected to the EventStoreDB server at the
// connection string (for example "esdb://host:2113?tls=false"). The client
// connects on first use. Close closes the client. The client's own logging
// is off unless the connection string's configuration sets a logger (see
// NewFromClient).
func New(connectionString string, opts ...Option) (*Store, error) {
	conf, err := esdb.ParseConnectionString(connectionString)
	if err != nil {
		return nil, fmt.Errorf("esdb: parse connection string: %w", err)
	}
	conf.Logger = esdb.NoopLogging()
	c, err := newConfig(opts)
	if err != nil {
		return nil, err
	}
	client, err := esdb.NewClient(conf)
	if err != nil {
		return nil, fmt.Errorf("esdb: new client: %w", err)
	}
	return newStore(client, true, c), nil
}

// NewFromClient returns a store over a client the caller owns: Close does
// not close it.
func NewFromClient(client *esdb.Client, opts ...Option) (*Store, error) {
	c, err := newConfig(opts)
	if err != nil {
		return nil, err
	}
	return newStore(client, false, c), nil
}

func newConfig(opts []Option) (config, error) {
	var c config
	for _, o := range opts {
		if err := o(&c); err != nil {
			return config{}, fmt.Errorf("esdb: %w", err)
		}
	}
	if c.maxData <= 0 {
		c.maxData = events.DefaultMaxDataBytes
	}
	return c, nil
}

func newStore(client *esdb.Client, owned bool, c config) *Store {
	// The store's lifetime context: cancelled by Close.
	life, cancel := context.WithCancel(context.Background())
	return &Store{client: client, owned: owned, maxData: c.maxData, prefix: c.prefix, keys: c.keys, life: life, cancel: cancel}
}

// MaxDataBytes returns the largest event Data the store accepts (the
// runtime keeps tool results and model messages under it).
func (s *Store) MaxDataBytes() int { return s.maxData }

// Close ends live subscriptions (they yield an error matching
// events.ErrClosed), makes every later call fail with events.ErrClosed and,
// for a store made by New, closes the client. Close is idempotent.
func (s *Store) Close() error {
	var err error
	s.closeOnce.Do(func() {
		s.cancel()
		if s.owned {
			err = s.client.Close()
		}
	})
	return err
}

// closed reports whether Close was called.
func (s *Store) closed() bool { return s.life.Err() != nil }

// dbStream is the database name of the port's stream name.
func (s *Store) dbStream(stream string) string { return s.prefix + stream }

// portStream is the port's name of a database stream and whether the
// stream belongs to this store: not a system stream, and inside the prefix.
func (s *Store) portStream(db string) (string, bool) {
	if strings.HasPrefix(db, "$") {
		return "", false
	}
	name, ok := strings.CutPrefix(db, s.prefix)
	return name, ok
}
