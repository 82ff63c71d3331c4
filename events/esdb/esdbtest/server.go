// Package esdbtest is a small in-memory server that speaks the part of the
// EventStoreDB gRPC protocol that weft's esdb backend and the official Go
// client use, for tests that cannot run a real EventStoreDB.
//
// It is built from the client module's own protobuf definitions and
// implements:
//
//   - ServerFeatures.GetSupportedMethods (the client's connection
//     handshake; it lists only the methods below);
//   - Streams.Append with every expected-revision kind (any, no stream,
//     stream exists, exact revision), EventStoreDB's idempotency rules
//     (a re-append of the same event ids after the same expected revision
//     succeeds without writing; a partial match is a wrong expected
//     version), the required "type" and "content-type" metadata, and the
//     server's maximum append size;
//   - Streams.Read: stream reads forwards and backwards from the start, the
//     end or a revision (StreamNotFound for a stream with no events); $all
//     reads forwards (inclusive of the position) and backwards (exclusive)
//     from the start, the end or a position, refusing a position that is
//     not the start of a record as the real server does; subscriptions to
//     a stream or to $all from the start, the end, a revision or a
//     position (exclusive), with the confirmation, catch-up, CaughtUp and
//     live phases, and $all filters on stream name or event type (prefixes
//     or a regular expression) with checkpoints.
//
// Positions behave like a current server's transaction log: every event is
// self-committed, so its commit and prepare positions are equal, and they
// advance by the record's size, so they are strictly increasing but not
// dense. The log starts with a few system events (streams starting with
// "$"), as a fresh server's does. Events carry "type", "content-type" and
// "created" (.NET ticks since the Unix epoch) system metadata.
//
// It does not implement: gossip and clusters, TLS and authentication,
// deletes and tombstones, batch append, link events and resolving them,
// stream metadata ($$ streams are plain streams here), persistent
// subscriptions, projections and operations, "requires leader",
// FellBehind, and durability (everything is lost on Close). In the real
// server, idempotency of appends with expected revision "any" is best
// effort (a bounded cache of recent event ids); here it never forgets.
//
// Import it from tests only.
package esdbtest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/EventStore/EventStore-Client-Go/v4/protos/serverfeatures"
	"github.com/EventStore/EventStore-Client-Go/v4/protos/shared"
	api "github.com/EventStore/EventStore-Client-Go/v4/protos/streams"
	"github.com/google/uuid"
	"google.golang.org/grpc"
	"google.golang.org/grpc/keepalive"
)

// Version is the EventStoreDB version the server reports in its handshake.
const Version = "24.10.0"

// DefaultMaxAppendSize is the largest append, in bytes of event types, data
// and metadata, the server accepts unless configured otherwise: 1 MiB, the
// real server's default.
const DefaultMaxAppendSize = 1 << 20

// Options configure a Server. The zero value is usable.
type Options struct {
	// MaxAppendSize is the largest append the server accepts;
	// 0 means DefaultMaxAppendSize.
	MaxAppendSize int
	// NoSystemEvents starts the log empty instead of with a few system
	// events.
	NoSystemEvents bool
	// Now is the clock for the "created" metadata; nil means time.Now.
	Now func() time.Time
}

// Server is a running in-memory EventStoreDB protocol server.
type Server struct {
	lis  net.Listener
	grpc *grpc.Server
	log  *memLog
	done chan struct{} // closed when Serve returns
	err  error         // Serve's error, read after done

	closeOnce sync.Once
}

// New starts a server on 127.0.0.1 on a free port.
func New(opts Options) (*Server, error) {
	if opts.MaxAppendSize <= 0 {
		opts.MaxAppendSize = DefaultMaxAppendSize
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("esdbtest: listen: %w", err)
	}
	s := &Server{
		lis: lis,
		// The client pings every 10 s by default, even without calls; the
		// real server allows that, grpc-go's default policy does not.
		grpc: grpc.NewServer(grpc.KeepaliveEnforcementPolicy(keepalive.EnforcementPolicy{
			MinTime:             time.Second,
			PermitWithoutStream: true,
		})),
		log:  newLog(opts.Now),
		done: make(chan struct{}),
	}
	if !opts.NoSystemEvents {
		s.seed()
	}
	api.RegisterStreamsServer(s.grpc, &streamsService{log: s.log, maxAppendSize: opts.MaxAppendSize})
	serverfeatures.RegisterServerFeaturesServer(s.grpc, featuresService{})
	go func() {
		defer close(s.done)
		s.err = s.grpc.Serve(lis)
	}()
	return s, nil
}

// Start starts a server for a test and stops it when the test ends.
func Start(tb testing.TB, opts Options) *Server {
	tb.Helper()
	s, err := New(opts)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		if err := s.Close(); err != nil {
			tb.Errorf("esdbtest: close: %v", err)
		}
	})
	return s
}

// seed writes the system events a fresh server's log starts with.
func (s *Server) seed() {
	for _, ev := range []struct{ stream, typ, data string }{
		{"$epoch-information", "$epoch-information", `{"epochNumber":0}`},
		{"$$$scavenges", "$metadata", `{"$maxAge":2592000}`},
		{"$users", "$User", `{"loginName":"admin"}`},
	} {
		s.log.append(ev.stream, expectation{kind: expectAny}, []proposed{{
			id: uuid.New(), eventType: ev.typ, contentType: "application/json", data: []byte(ev.data),
		}})
	}
}

// Addr is the host:port the server listens on.
func (s *Server) Addr() string { return s.lis.Addr().String() }

// ConnectionString is the esdb:// connection string for the server
// (insecure, single node).
func (s *Server) ConnectionString() string {
	return "esdb://" + s.Addr() + "?tls=false"
}

// Close stops the server: it closes the listener and every open call
// (subscriptions end with an error on the client side) and waits for the
// server to return. Close is idempotent.
func (s *Server) Close() error {
	s.closeOnce.Do(func() {
		s.grpc.Stop()
		<-s.done
		if errors.Is(s.err, grpc.ErrServerStopped) {
			s.err = nil
		}
	})
	return s.err
}

// Len returns how many events the log holds, system events included.
func (s *Server) Len() int {
	s.log.mu.Lock()
	defer s.log.mu.Unlock()
	return len(s.log.records)
}

// featuresService answers the client's handshake.
type featuresService struct {
	serverfeatures.UnimplementedServerFeaturesServer
}

func (featuresService) GetSupportedMethods(context.Context, *shared.Empty) (*serverfeatures.SupportedMethods, error) {
	const svc = "event_store.client.streams.streams"
	return &serverfeatures.SupportedMethods{
		EventStoreServerVersion: Version,
		Methods: []*serverfeatures.SupportedMethod{
			{ServiceName: svc, MethodName: "read"},
			{ServiceName: svc, MethodName: "append"},
		},
	}, nil
}
