package esdb

import (
	"errors"
	"fmt"
	"strings"

	"github.com/EventStore/EventStore-Client-Go/v4/esdb"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/weft-run/weft/events"
)

// code returns the client's error code for err, or false when err is not a
// client error.
func code(err error) (esdb.ErrorCode, bool) {
	var e *esdb.Error
	if errors.As(err, &e) {
		return e.Code(), true
	}
	return 0, false
}

func isWrongExpectedVersion(err error) bool {
	c, ok := code(err)
	return ok && c == esdb.ErrorCodeWrongExpectedVersion
}

func isNotFound(err error) bool {
	c, ok := code(err)
	return ok && c == esdb.ErrorCodeResourceNotFound
}

// grpcStatus returns the gRPC status inside a client error.
func grpcStatus(err error) (*status.Status, bool) {
	var e *esdb.Error
	if errors.As(err, &e) && e.Err() != nil {
		err = e.Err()
	}
	return status.FromError(err)
}

// isTooLarge reports whether the server refused an append for its size
// ("Maximum Append Size of N Exceeded." or, on newer servers, "... exceeds
// Maximum Append Event Size of N.").
func isTooLarge(err error) bool {
	st, ok := grpcStatus(err)
	return ok && st.Code() == codes.InvalidArgument && strings.Contains(st.Message(), "Maximum Append")
}

// isInvalidPosition reports whether the server refused a read of $all from
// a position that is not the start of an event.
func isInvalidPosition(err error) bool {
	st, ok := grpcStatus(err)
	return ok && st.Code() == codes.InvalidArgument && strings.Contains(st.Message(), "invalid position")
}

// ErrInvalidPosition is returned (wrapped in an *events.Error) by ReadAll
// and Subscribe for an after that is neither 0 nor a Position this backend
// returned.
var ErrInvalidPosition = errors.New("esdb: not a position of an event")

// wrap builds the events.Error of an operation; a closed store wins over
// whatever the client reported.
func (s *Store) wrap(op, stream string, err error) error {
	if s.closed() {
		err = fmt.Errorf("%w: %w", events.ErrClosed, err)
	}
	return &events.Error{Op: op, Stream: stream, Err: err}
}
